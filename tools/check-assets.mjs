#!/usr/bin/env node
// The stylesheets and scripts the binaries embed (orchestrator/*/assets/), checked before they
// ship inside a page: each .js file through `node --check` (parsed, never run), each .css file
// through a small structural reader: comments and strings closed, braces and brackets balanced,
// rule blocks holding only `name: value` declarations, at-rule blocks holding only rules, no
// character outside printable ASCII. Prints one line per problem; exit 1 if any.
//   node tools/check-assets.mjs [FILE...]   (default: every file under orchestrator/*/assets/)
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function defaultFiles() {
  const out = [];
  for (const wing of readdirSync(join(root, 'orchestrator'), { withFileTypes: true })) {
    if (!wing.isDirectory()) continue;
    const assets = join(root, 'orchestrator', wing.name, 'assets');
    let names = [];
    try { names = readdirSync(assets); } catch { continue; }
    for (const name of names.sort()) out.push(join(assets, name));
  }
  return out;
}

function checkScript(file) {
  try {
    execFileSync(process.execPath, ['--check', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    return [];
  } catch (e) {
    const lines = String(e.stderr || e.message).trim().split('\n');
    return [lines.find((l) => /Error/.test(l)) || lines[0]];
  }
}

// CSS with its comments and strings blanked out (same length, so offsets still point at lines).
function blankCommentsAndStrings(css, problems, lineOf) {
  let out = '';
  for (let i = 0; i < css.length;) {
    if (css.startsWith('/*', i)) {
      const end = css.indexOf('*/', i + 2);
      if (end < 0) { problems.push(`line ${lineOf(i)}: comment never closed`); return out; }
      out += css.slice(i, end + 2).replace(/[^\n]/g, ' ');
      i = end + 2;
    } else if (css[i] === '"' || css[i] === "'") {
      let j = i + 1;
      while (j < css.length && css[j] !== css[i] && css[j] !== '\n') j += css[j] === '\\' ? 2 : 1;
      if (css[j] !== css[i]) { problems.push(`line ${lineOf(i)}: string never closed`); return out; }
      out += css[i] + 'x'.repeat(j - i - 1) + css[j];
      i = j + 1;
    } else {
      out += css[i++];
    }
  }
  return out;
}

const declaration = /^(--[A-Za-z0-9_-]+|-?[A-Za-z][A-Za-z-]*)\s*:\s*\S[^]*$/;

// One block's body: declarations (a rule) or rules (an at-rule such as @media).
function checkBody(text, start, holdsRules, problems, lineOf) {
  if (holdsRules) return checkRules(text, start, problems, lineOf);
  let at = start;
  for (const part of text.split(';')) {
    const d = part.trim();
    if (d && !declaration.test(d)) problems.push(`line ${lineOf(at)}: not a declaration: ${d}`);
    at += part.length + 1;
  }
}

// A list of rules `prelude { body }` from `start`; returns nothing, records problems.
function checkRules(text, start, problems, lineOf) {
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{', i);
    const rest = open < 0 ? text.slice(i) : text.slice(i, open);
    if (open < 0) {
      const lead = rest.length - rest.trimStart().length;
      if (rest.trim()) problems.push(`line ${lineOf(start + i + lead)}: text outside any rule: ${rest.trim()}`);
      return;
    }
    const prelude = rest.trim();
    if (!prelude || /[;}]/.test(prelude))
      problems.push(`line ${lineOf(start + open)}: a block without a selector: '${prelude}'`);
    let depth = 1, j = open + 1;
    for (; j < text.length && depth; ++j) depth += text[j] === '{' ? 1 : text[j] === '}' ? -1 : 0;
    if (depth) { problems.push(`line ${lineOf(start + open)}: '{' never closed`); return; }
    checkBody(text.slice(open + 1, j - 1), start + open + 1, prelude.startsWith('@'), problems, lineOf);
    i = j;
  }
}

function checkStylesheet(file) {
  const css = readFileSync(file, 'latin1');
  const lineOf = (offset) => css.slice(0, offset).split('\n').length;
  const problems = [];
  const stray = css.search(/[^\t\n\x20-\x7e]/);
  if (stray >= 0) problems.push(`line ${lineOf(stray)}: a character outside printable ASCII`);
  const text = blankCommentsAndStrings(css, problems, lineOf);
  const pairs = { '(': ')', '[': ']', '{': '}' };
  const stack = [];
  for (let i = 0; i < text.length; ++i) {
    const c = text[i];
    if (pairs[c]) stack.push({ c, i });
    else if (c === ')' || c === ']' || c === '}') {
      const top = stack.pop();
      if (!top || pairs[top.c] !== c) { problems.push(`line ${lineOf(i)}: unmatched '${c}'`); return problems; }
    }
  }
  if (stack.length) { problems.push(`line ${lineOf(stack[0].i)}: '${stack[0].c}' never closed`); return problems; }
  checkRules(text, 0, problems, lineOf);
  return problems;
}

const files = process.argv.length > 2 ? process.argv.slice(2) : defaultFiles();
let failed = false;
for (const file of files) {
  const name = relative(root, file).startsWith('..') ? file : relative(root, file);
  let problems;
  if (file.endsWith('.js')) problems = checkScript(file);
  else if (file.endsWith('.css')) problems = checkStylesheet(file);
  else problems = ['neither .js nor .css: nothing checks it'];
  for (const p of problems) console.log(`${name}: ${p}`);
  failed ||= problems.length > 0;
}
if (!files.length) { console.log('no assets found under orchestrator/*/assets/'); failed = true; }
else if (!failed) console.log(`assets: ${files.length} files parse`);
process.exit(failed ? 1 : 0);
