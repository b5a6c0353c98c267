// Runs setfuncs/explorables/js/deepset.js's forward pass for tests/test_model_export.py: reads
// [{model, populations: [x, ...]}, ...] as JSON on stdin, writes [[{output, reads} | {error}, ...], ...].
//
// The module is imported from a data: URL of its source, not from its path: node then reads it as
// an ES module whatever the package.json around it says, and an import statement in it (which
// deepset.js must not have: it is inlined with other files) would fail to resolve.
import { readFileSync } from "node:fs";

const source = readFileSync(new URL("../setfuncs/explorables/js/deepset.js", import.meta.url), "utf8");
const { forward } = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

let input = "";
for await (const chunk of process.stdin) input += chunk;
const results = JSON.parse(input).map(({ model, populations }) => populations.map((x) => {
  try {
    return forward(model, x);
  } catch (error) {
    return { error: String(error.message) };
  }
}));
process.stdout.write(JSON.stringify(results));
