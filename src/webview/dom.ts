// A tiny element builder: the panel's DOM is built with createElement only (no innerHTML, so candidate
// text can never become markup, and the CSP needs no inline anything).

type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs, ...children: (Node | string | undefined | false)[]): HTMLElementTagNameMap[K];
export function h(tag: string, attrs?: Attrs, ...children: (Node | string | undefined | false)[]): HTMLElement;
export function h(tag: string, attrs: Attrs = {}, ...children: (Node | string | undefined | false)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (k === 'class') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

export function s(tag: string, attrs: Record<string, string | number> = {}, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.firstChild.remove();
}
