#!/usr/bin/env node
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const cli = path.join(__dirname, '..', 'dist', 'cli.js');
if (!fs.existsSync(cli)) {
  process.stderr.write('kernelevolve: the CLI is not built yet. Run `npm run build` in ' + path.dirname(__dirname) + ' first.\n');
  process.exit(2);
}
require(cli).main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
