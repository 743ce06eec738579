// Letta Code 0.34.12's own memory rules, run with the Node the wheel bundles: the test oracle.
//
// Nothing here re-implements a rule. Every function named below is taken, as source text, from
// the released bundle `letta_code/_payload/app/letta.js` (or imported from the wheel's
// `dist/memory-constraints.js`) and evaluated as it is; the validator script and the pre-commit
// hook are rebuilt from the bundle's own template literals, byte for byte what Letta Code installs
// in `.git/hooks/`. Usage: `node letta_code_oracle.mjs APP_DIR`, then one JSON request per line on
// stdin, one JSON answer per line on stdout ({"ok": ...} or {"error": "..."}).
//
// Requests:
//   {"op": "tree", "files": [{"path", "mode", "text"}], "accepted": [...] | null,
//    "config": {...}, "layout": "...", "requireRootMarker": bool}
//        -> validateMemoryTreeConstraints' errors over an in-memory tree
//   {"op": "frontmatter", "path", "content", "previousContent", "format"} -> its errors
//   {"op": "config", "content"} -> {"config"} or {"errors": [...]} (parseMemoryConstraintsConfig)
//   {"op": "audit", "repo"} -> validateMemoryConstraintsHead(repo): {valid, output, policy}
//   {"op": "install", "repo", "policy"} -> writes the hook, validator and policy file as
//        installPreCommitHookWithPolicy does (tests call it on throwaway clones only)
//   {"op": "initial", "blocks": [{label, value, description}]}
//        -> initialMemoryFilesFromCreateBody: the files Letta Code creates for those blocks
import * as childProcess from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import * as readline from "node:readline";
import { pathToFileURL } from "node:url";
import { functionSource, readBundle } from "./letta_bundle.mjs";

const appDir = process.argv[2];
const bundle = readBundle(appDir);
const dist = await import(pathToFileURL(nodePath.join(appDir, "dist", "memory-constraints.js")).href);

const source = (name, after = "") => functionSource(bundle, name, after);

// The body of a String.raw template assigned as `NAME = String.raw\``.
function template(name) {
  const marker = `${name} = String.raw\``;
  const start = bundle.indexOf(marker);
  if (start < 0) throw new Error(`template not in bundle: ${name}`);
  const body = bundle.indexOf("`", start + marker.length - 1) + 1;
  const end = bundle.indexOf("\n`;\n", body);
  return bundle.slice(body, end + 1);
}

// Evaluate bundle functions in one scope that provides the names they refer to.
function scope(names, bindings, sources) {
  const params = Object.keys(bindings);
  const code = `${sources.join("\n")}\nreturn { ${names.join(", ")} };`;
  return new Function(...params, code)(...params.map((key) => bindings[key]));
}

const rules = scope(
  ["validateMemoryFileFrontmatter", "validateMemoryTreeConstraints", "parseMemoryConstraintsConfig"],
  {},
  [source("validateMemoryFileFrontmatter"), source("validateMemoryTreeConstraints"),
   source("parseMemoryConstraintsConfig")],
);

const CONSTANTS = {
  MEMORY_CONSTRAINTS_CONFIG_PATH: dist.MEMORY_CONSTRAINTS_CONFIG_PATH,
  DEFAULT_MEMORY_CONSTRAINTS_CONFIG: dist.DEFAULT_MEMORY_CONSTRAINTS_CONFIG,
  MEMORY_CONSTRAINTS_VALIDATOR_NAME: "letta-memory-constraints.cjs",
  MEMORY_CONSTRAINTS_UPDATE_ENV: "LETTA_MEMORY_CONSTRAINTS_UPDATE",
  MEMORY_LAYOUT_POLICY: "letta-memory-layout-policy",
};

const VALIDATOR_SCRIPT = new Function(
  "MEMORY_CONSTRAINTS_CONFIG_PATH", "parseMemoryConstraintsConfig", "validateMemoryTreeConstraints",
  "DEFAULT_MEMORY_CONSTRAINTS_CONFIG", "MEMORY_CONSTRAINTS_UPDATE_ENV",
  `return String.raw\`${template("MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT")}\`;`,
)(CONSTANTS.MEMORY_CONSTRAINTS_CONFIG_PATH, rules.parseMemoryConstraintsConfig,
  rules.validateMemoryTreeConstraints, CONSTANTS.DEFAULT_MEMORY_CONSTRAINTS_CONFIG,
  CONSTANTS.MEMORY_CONSTRAINTS_UPDATE_ENV);

const git = {
  execFileSync: childProcess.execFileSync, spawnSync2: childProcess.spawnSync,
  spawnSync: childProcess.spawnSync, readFileSync5: fs.readFileSync, resolve4: nodePath.resolve,
  mkdtempSync: fs.mkdtempSync, join9: nodePath.join, join8: nodePath.join, tmpdir2: os.tmpdir,
  writeFileSync4: fs.writeFileSync, writeFileSync3: fs.writeFileSync, rmSync: fs.rmSync,
  existsSync5: fs.existsSync, mkdirSync5: fs.mkdirSync, chmodSync: fs.chmodSync,
  debugLog: () => {},
};

const hooks = scope(
  ["buildPreCommitHookScript", "installPreCommitHookWithPolicy", "memoryLayoutPolicy",
   "validateMemoryConstraintsHead"],
  { ...git, ...CONSTANTS, validateMemoryFileFrontmatter: rules.validateMemoryFileFrontmatter,
    MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT: VALIDATOR_SCRIPT, PRE_COMMIT_HOOK_SCRIPT: "" },
  [source("buildPreCommitHookScript"),
   // installPreCommitHookWithPolicy reads the module-level PRE_COMMIT_HOOK_SCRIPT, which the
   // bundle sets to buildPreCommitHookScript() at start-up; do the same here.
   "PRE_COMMIT_HOOK_SCRIPT = buildPreCommitHookScript();",
   source("installPreCommitHookWithPolicy"), source("memoryLayoutPolicy"),
   source("validateMemoryConstraintsHead")],
);

// How Letta Code reads a memory file back (the agent's view): its own parseFrontmatter.
const reader = scope(["parseFrontmatter"], {}, [source("parseFrontmatter")]);

const DEFAULT_ROOT_MEMORY_BLOCK = { label: "MEMORY", value: "# Memory\n", description: "Root memory index." };
const initial = scope(
  ["initialMemoryFilesFromCreateBody"],
  { DEFAULT_ROOT_MEMORY_BLOCK },
  ["normalizeLabel", "sanitizeFrontmatterValue", "rootMemoryBlockPath", "memoryNameFromPath",
   "validRelativePath", "renderInitialMemoryFile", "memoryBlocks", "initialMemoryFilesFromCreateBody"]
    .map((name) => source(name, "// src/backend/local/initial-memory.ts")),
);

function memoryReader(files) {
  const byPath = new Map(files.map((file) => [file.path, file]));
  return {
    async listFiles() { return files.map(({ path, mode }) => ({ path, mode })); },
    async readFile(path) {
      const file = byPath.get(path);
      return file ? new Uint8Array(Buffer.from(file.text, "utf8")) : null;
    },
  };
}

async function answer(request) {
  switch (request.op) {
    case "tree":
      return rules.validateMemoryTreeConstraints(memoryReader(request.files), {
        config: request.config, layout: request.layout,
        requireRootMarker: Boolean(request.requireRootMarker),
        acceptedTree: request.accepted ? memoryReader(request.accepted) : undefined,
      });
    case "frontmatter":
      return rules.validateMemoryFileFrontmatter(request);
    case "config":
      try {
        return { config: rules.parseMemoryConstraintsConfig(request.content) };
      } catch (error) {
        return { errors: error.message.split("\n") };
      }
    case "audit":
      return { ...hooks.validateMemoryConstraintsHead(request.repo),
               policy: hooks.memoryLayoutPolicy(request.repo) };
    case "install":
      hooks.installPreCommitHookWithPolicy(request.repo, request.policy);
      return { hook: nodePath.join(request.repo, ".git", "hooks", "pre-commit") };
    case "parse":
      return reader.parseFrontmatter(request.content);
    case "trim":  // JavaScript's own String.prototype.trim
      return request.content.trim();
    case "initial":
      return initial.initialMemoryFilesFromCreateBody({ memory_blocks: request.blocks });
    default:
      throw new Error(`unknown op ${request.op}`);
  }
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let reply;
  try {
    reply = { ok: await answer(JSON.parse(line)) };
  } catch (error) {
    reply = { error: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
