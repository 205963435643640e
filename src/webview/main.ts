// The side panel's entry point in the webview.
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import { PanelApp } from './panelApp';
import { PanelClient } from './panelClient';

declare function acquireVsCodeApi(): { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };

const api = acquireVsCodeApi();
const client = new PanelClient(api);
new PanelApp(document.getElementById('root')!, client);
// A fresh id per page load tells the host a reload (or re-show) from a message of the same page.
client.ready(`${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`);
