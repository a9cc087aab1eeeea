// Writes openai-request-schemas.json: the request schemas the model client's OpenAI bodies are
// checked against (CreateResponse, CreateChatCompletionRequest) and every schema they $ref,
// cut from OpenAI's OpenAPI description (github.com/openai/openai-openapi, openapi.json).
// Usage: node vendor-openai-schemas.mjs OPENAPI_JSON SOURCE_NOTE
import { readFileSync, writeFileSync } from "node:fs";

const [openapi_path, source_note] = process.argv.slice(2);
if (!openapi_path || !source_note) {
  console.error("usage: node vendor-openai-schemas.mjs OPENAPI_JSON 'repo@commit (date)'");
  process.exit(2);
}
const all = JSON.parse(readFileSync(openapi_path, "utf8")).components.schemas;
const roots = ["CreateResponse", "CreateChatCompletionRequest"];
const prefix = "#/components/schemas/";

const kept = new Map();
function keep(name) {
  if (kept.has(name)) return;
  if (!(name in all)) throw new Error(`$ref to a missing schema: ${name}`);
  kept.set(name, all[name]);
  visit(all[name]);
}
function visit(node) {
  if (Array.isArray(node)) return node.forEach(visit);
  if (node === null || typeof node !== "object") return;
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") {
      if (!value.startsWith(prefix)) throw new Error(`unexpected $ref form: ${value}`);
      keep(value.slice(prefix.length));
    } else {
      visit(value);
    }
  }
}
roots.forEach(keep);

const schemas = Object.fromEntries([...kept.keys()].sort().map((name) => [name, kept.get(name)]));
const out = {
  $id: "openai-request-schemas.json",
  $comment: `Cut from ${source_note} by vendor-openai-schemas.mjs: ${roots.join(", ")} and every schema they $ref.`,
  components: { schemas },
};
writeFileSync("openai-request-schemas.json", JSON.stringify(out, null, 1) + "\n");
console.log(`kept ${kept.size} of ${Object.keys(all).length} schemas`);
