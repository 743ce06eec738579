// The one reader of Letta Code's released bundle both oracles use (letta_code_oracle.mjs,
// letta_home_oracle.mjs): the source text of one of its top-level functions, evaluated unchanged
// by the caller.
import * as fs from "node:fs";
import * as nodePath from "node:path";

/** The bundle `APP_DIR/letta.js` as text. */
export function readBundle(appDir) {
  return fs.readFileSync(nodePath.join(appDir, "letta.js"), "utf8");
}

// The source text of a top-level function of the bundle, from `function NAME(` (or `async
// function`) to the first line that is a lone `}` and closes it (a template literal inside may
// hold such lines too: the first cut that parses as one function is the function); `after`
// picks the copy after a marker.
export function functionSource(bundle, name, after = "") {
  const start0 = after ? bundle.indexOf(after) : 0;
  if (start0 < 0) throw new Error(`marker not in bundle: ${after}`);
  const re = new RegExp(`^(?:async )?function ${name}\\(`, "m");
  const found = re.exec(bundle.slice(start0));
  if (!found) throw new Error(`function not in bundle: ${name}`);
  const start = start0 + found.index;
  for (let end = bundle.indexOf("\n}\n", start); end >= 0; end = bundle.indexOf("\n}\n", end + 1)) {
    const text = bundle.slice(start, end + 2);
    try {
      new Function(`return (${text});`);
      return text;
    } catch {}
  }
  throw new Error(`function ${name} does not end`);
}
