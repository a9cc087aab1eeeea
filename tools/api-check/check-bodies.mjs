// Checks recorded model request bodies the way a provider's own client would see them:
// every body against its SDK's params type with tsc (object literals, so a key the SDK does
// not know is an error), and every OpenAI body against OpenAI's OpenAPI request schema (ajv).
// The file name says the kind: responses-*.json (Responses create, non-streaming),
// chat-*.json (Chat Completions create), messages-*.json (Anthropic Messages create).
// Usage: node check-bodies.mjs DIR
// Exit codes: 0 every body passes; 1 one line per failure; 2 bad usage; 77 skipped (the
// packages are not installed: npm ci in tools/api-check).
import { execFileSync } from "node:child_process";
import {
  existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const k_ok = 0, k_failed = 1, k_usage = 2, k_skipped = 77;
const here = dirname(fileURLToPath(import.meta.url));

// Each kind: the SDK params types a body must be assignable to (package, module, type; the
// Anthropic bodies against the 1.x SDK and the last 0.x one, installed as anthropic-sdk-v0),
// and the OpenAPI schema (OpenAI only).
const k_kinds = {
  responses: {
    types: [["openai", "resources/responses/responses", "ResponseCreateParamsNonStreaming"]],
    schema: "CreateResponse",
  },
  chat: {
    types: [["openai", "resources/chat/completions", "ChatCompletionCreateParamsNonStreaming"]],
    schema: "CreateChatCompletionRequest",
  },
  messages: {
    types: [["@anthropic-ai/sdk", "resources/messages", "MessageCreateParamsNonStreaming"],
            ["anthropic-sdk-v0", "resources/messages", "MessageCreateParamsNonStreaming"]],
    schema: null,
  },
  messages_2023: {
    types: [["anthropic-sdk-v0", "resources/messages", "MessageCreateParamsNonStreaming"]],
    schema: null,
  },
};

function read_bodies(dir) {
  const bodies = [];
  const failures = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    let kind = file.slice(0, file.indexOf("-"));
    // Anthropic bodies name the API version they are sent with: 2023-06-01 is what the 0.x SDK
    // speaks (temperature still there); 2026-10-21 what the 1.x SDK speaks (no sampling
    // parameters). A 2026-10-21 body must pass both.
    if (file.startsWith("messages-2023-06-01-")) kind = "messages_2023";
    if (!(kind in k_kinds)) {
      failures.push(`${file}: unknown kind (want responses-, chat- or messages-)`);
      continue;
    }
    try {
      bodies.push({ file, kind, body: JSON.parse(readFileSync(join(dir, file), "utf8")) });
    } catch (e) {
      failures.push(`${file}: not JSON: ${e.message}`);
    }
  }
  return { bodies, failures };
}

function package_version(name) {
  return JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
}

// One TypeScript file assigning each body, as an object literal, to each of its params types;
// tsc's errors map back to the body and the SDK by line.
function check_types(bodies) {
  const work = mkdtempSync(join(tmpdir(), "api-check-"));
  try {
    symlinkSync(join(here, "node_modules"), join(work, "node_modules"), "dir");
    const lines = [];
    const aliases = new Map();  // "package/module/type" -> [alias, label]
    for (const kind of Object.values(k_kinds))
      for (const [pkg, module, type] of kind.types) {
        const alias = `T${aliases.size}`;
        aliases.set(`${pkg}/${module}/${type}`, [alias, `${type} of ${pkg} ${package_version(pkg)}`]);
        lines.push(`import type { ${type} as ${alias} } from "${pkg}/${module}";`);
      }
    const owner = [];  // line number (1-based) -> "body file, against type"
    bodies.forEach(({ file, kind, body }, i) => {
      for (const [pkg, module, type] of k_kinds[kind].types) {
        const [alias, label] = aliases.get(`${pkg}/${module}/${type}`);
        const first = lines.length + 1;
        const literal = JSON.stringify(body, null, 2);
        lines.push(...`export const body_${i}_${alias}: ${alias} = ${literal};`.split("\n"));
        for (let n = first; n <= lines.length; ++n) owner[n] = `${file} (${label})`;
      }
    });
    writeFileSync(join(work, "bodies.mts"), lines.join("\n") + "\n");
    const tsc = join(here, "node_modules", "typescript", "bin", "tsc");
    const args = [tsc, "--noEmit", "--strict", "--skipLibCheck", "--target", "es2022",
                  "--module", "nodenext", "--moduleResolution", "nodenext", "--types", "",
                  "--pretty", "false", join(work, "bodies.mts")];
    let out = "";
    try {
      execFileSync(process.execPath, args, { cwd: work, encoding: "utf8", stdio: "pipe" });
      return [];
    } catch (e) {
      out = `${e.stdout ?? ""}${e.stderr ?? ""}`;
      if (!out.trim()) throw e;
    }
    return tsc_failures(out, owner, lines);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// tsc's output as one line per error: the body file, the JSON line it points at, the message
// with its elaboration lines joined.
function tsc_failures(out, owner, lines) {
  const failures = [];
  let current = null;
  for (const line of out.split("\n")) {
    const m = line.match(/^.*bodies\.mts\((\d+),(\d+)\): error (TS\d+): (.*)$/);
    if (m) {
      const n = Number(m[1]);
      current = { file: owner[n] ?? "bodies.mts", at: (lines[n - 1] ?? "").trim(), code: m[3], text: [m[4]] };
      failures.push(current);
    } else if (current && line.trim()) {
      current.text.push(line.trim());
    } else if (line.trim()) {
      failures.push({ file: "tsc", at: "", code: "", text: [line.trim()] });
    }
  }
  return failures.map((f) => `${f.file}: tsc ${f.code} at ${f.at}: ${f.text.join(" | ")}`);
}

// The complaints that say what is wrong. ajv reports every anyOf/oneOf branch that did not
// match; a branch describing another item "type" than the one in the body says nothing about
// it, nor do the "must match a schema in anyOf" summaries, so those are dropped (errors carry
// their schema and data: ajv's verbose option). Of the rest, those deepest in the body are said.
function other_type_branch(e) {
  const type = e.parentSchema?.properties?.type;
  const allowed = type?.enum ?? (type && "const" in type ? [type.const] : null);
  const data = e.instancePath.endsWith("/type") ? e.data : e.data?.type;
  return allowed !== null && data !== undefined && !allowed.includes(data);
}

function describe_ajv_errors(errors) {
  const noise = (e) => ["anyOf", "oneOf"].includes(e.keyword) || other_type_branch(e) ||
    (["enum", "const"].includes(e.keyword) && e.instancePath.endsWith("/type"));
  const telling = errors.some((e) => !noise(e)) ? errors.filter((e) => !noise(e)) : errors;
  const depth = (e) => e.instancePath.split("/").length;
  const deepest = Math.max(...telling.map(depth));
  const said = new Set();
  for (const e of telling.filter((x) => depth(x) === deepest)) {
    const extra = e.params?.additionalProperty ?? e.params?.allowedValues?.join("|") ?? "";
    said.add(`${e.instancePath || "/"} ${e.message}${extra ? ` (${extra})` : ""}`);
  }
  return [...said].join("; ");
}

// OpenAPI 3.0's `nullable`, which this 3.1 description still carries, as JSON Schema: ajv
// takes it beside a `type` but refuses it alone, so there it becomes anyOf [schema, null].
function without_bare_nullable(node) {
  if (Array.isArray(node)) return node.map(without_bare_nullable);
  if (node === null || typeof node !== "object") return node;
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, without_bare_nullable(v)]));
  if (out.nullable === true && !("type" in out)) {
    delete out.nullable;
    return { anyOf: [out, { type: "null" }] };
  }
  return out;
}

function check_schemas(bodies, require) {
  const Ajv2020 = require("ajv/dist/2020").default;
  const add_formats = require("ajv-formats").default;
  const ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true });
  add_formats(ajv);
  ajv.addFormat("float", true);  // OpenAPI's number format: any number
  const text = readFileSync(join(here, "openai-request-schemas.json"), "utf8");
  ajv.addSchema(without_bare_nullable(JSON.parse(text)));
  const failures = [];
  for (const { file, kind, body } of bodies) {
    const schema = k_kinds[kind].schema;
    if (!schema) continue;
    const validate = ajv.getSchema(`openai-request-schemas.json#/components/schemas/${schema}`);
    if (!validate(body)) failures.push(`${file}: ajv ${schema}: ${describe_ajv_errors(validate.errors)}`);
  }
  return failures;
}

function main() {
  const dir = process.argv[2];
  if (!dir || process.argv.length > 3) {
    console.error("usage: node check-bodies.mjs DIR");
    return k_usage;
  }
  if (!existsSync(join(here, "node_modules", "typescript"))) {
    console.log(`skipped: ${join(here, "node_modules")} is missing; fix: (cd tools/api-check && npm ci)`);
    return k_skipped;
  }
  const { bodies, failures } = read_bodies(dir);
  if (bodies.length === 0 && failures.length === 0) {
    console.error(`check-bodies: no request bodies (*.json) in ${dir}`);
    return k_failed;
  }
  failures.push(...check_types(bodies), ...check_schemas(bodies, createRequire(import.meta.url)));
  for (const f of failures) console.log(f);
  const counts = Object.keys(k_kinds).map((k) => `${bodies.filter((b) => b.kind === k).length} ${k}`);
  const verdict = failures.length ? `${failures.length} failures`
                                  : "all pass the SDK types and the OpenAPI schemas";
  console.log(`check-bodies: ${bodies.length} bodies (${counts.join(", ")}) in ${basename(dir)}: ${verdict}`);
  return failures.length ? k_failed : k_ok;
}

process.exitCode = main();
