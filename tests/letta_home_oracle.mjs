// Letta Code 0.34.12's own functions for what it keeps in a Letta home (`~/.letta`) beside the
// memory repository: the per-conversation reflection state and transcript
// (src/cli/helpers/reflection-transcript.ts), the reflection and memory-worker worktrees and their
// merges (src/agent/memory-worktree.ts), and the reflection trigger setting
// (src/cli/helpers/memory-reminder.ts). The tests build Letta homes with these, so what memlab
// reads is what Letta Code writes.
//
// As in letta_code_oracle.mjs, nothing is re-implemented: each function is taken, as source text,
// from the released bundle `letta_code/_payload/app/letta.js` and evaluated unchanged, in a scope
// that binds the names it refers to (node's fs, path, child_process, crypto). Three bindings are
// not Letta Code's: `debugLog` writes nothing (a debug log file); `getOwnProcessStartTime` gives
// null (it goes into a lock file's owner record, which is deleted when the lock is released); and
// `normalizeTranscript` (a transcript-adapter library that reshapes the rows of the payload file a
// reflection pass hands its subagent) gives the rows as they are: memlab never reads a payload's
// content, only that the file is there.
//
// Usage: `node letta_home_oracle.mjs APP_DIR`, one JSON request per line on stdin, one JSON answer
// per line on stdout ({"ok": ...} or {"error": "..."}). Every request names `home` (the HOME the
// functions see: os.homedir() follows it) and may name `transcriptRoot` (LETTA_TRANSCRIPT_ROOT)
// and `now` (the time the functions see, ISO text).
//   {"op": "append", agentId, conversationId, lines: [{kind, text, id, messageId}]}
//        -> appendTranscriptDeltaJsonl: rows appended, state.json's step count raised
//   {"op": "start", agentId, conversationId} -> buildAutoReflectionPayload (a pass starts)
//   {"op": "finish", agentId, conversationId, payloadPath, endSnapshotLine, success}
//        -> finalizeAutoReflectionPayload (the pass ends, successfully or not)
//   {"op": "state", agentId, conversationId} -> getReflectionTranscriptState
//   {"op": "worktree", parentMemoryDir, label} -> createReflectionMemoryWorktree
//   {"op": "finalize", worktree, options} -> finalizeReflectionMemoryWorktree's work
//   {"op": "integrate", worktree, options} -> integrateMemoryWorkerWorktree
//   {"op": "settings", global} -> the reflection settings getReflectionSettings resolves from a
//        global settings.json (no project settings), for every agent id in `agents`
import * as childProcess from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as os from "node:os";
import * as nodePath from "node:path";
import * as readline from "node:readline";
import { promisify } from "node:util";
import { functionSource, readBundle } from "./letta_bundle.mjs";

const appDir = process.argv[2];
const bundle = readBundle(appDir);

const source = (name, after = "") => functionSource(bundle, name, after);

// A constant's value as the bundle assigns it (`NAME = <literal>` up to the first `;\n` or `,`
// that ends a valid expression).
function constant(name, after = "", env = {}) {
  const start0 = after ? bundle.indexOf(after) : 0;
  const re = new RegExp(`\\b${name} = `);
  const found = re.exec(bundle.slice(start0));
  if (!found) throw new Error(`constant not in bundle: ${name}`);
  const start = start0 + found.index + found[0].length;
  for (let end = start + 1; end < start + 20000; end += 1) {
    const ch = bundle[end];
    if (ch !== ";" && ch !== "," && ch !== "\n") continue;
    try {
      return new Function(...Object.keys(env), `return (${bundle.slice(start, end)});`)(
        ...Object.values(env));
    } catch {}
  }
  throw new Error(`constant ${name} does not end`);
}

function scope(names, bindings, sources) {
  const params = Object.keys(bindings);
  const code = `${sources.join("\n")}\nreturn { ${names.join(", ")} };`;
  return new Function(...params, code)(...params.map((key) => bindings[key]));
}

// The clock the functions read (`new Date()`): a request's `now` (ISO text) sets it, so a test
// home can hold passes a week old; git's commit dates follow it through GIT_*_DATE.
let clockMs = null;
class ClockDate extends Date {
  constructor(...args) {
    if (args.length === 0 && clockMs !== null) super(clockMs);
    else super(...args);
  }
  static now() {
    return clockMs ?? Date.now();
  }
}

const TRANSCRIPT = "// src/cli/helpers/reflection-transcript.ts";
const WORKTREE = "// src/agent/memory-worktree.ts";
const FILE_LOCK = "// src/utils/file-lock.ts";

const lock = scope(
  ["withFileLock"],
  {
    randomUUID4: crypto.randomUUID, readFile3: fsp.readFile, stat4: fsp.stat, link: fsp.link,
    unlink: fsp.unlink, writeFile3: fsp.writeFile,
    getOwnProcessStartTime: () => null,
    isSameProcessRunning: async () => true,
    DEFAULT_OPTIONS: { staleMs: 90000, retryMs: 25, timeoutMs: 1e4, reapOnlyDeadOwner: false },
    CORRUPT_LOCK_GRACE_MS: constant("CORRUPT_LOCK_GRACE_MS", FILE_LOCK),
  },
  ["withFileLock", "tryAcquireFileLock", "ownerRecord", "publishExclusive", "releaseIfHeld",
   "tryReapStaleLock", "removeIfUnchanged", "acquireReapMarker"].map((n) => source(n, FILE_LOCK))
    .concat([source("sleep9")]),
);

const transcriptRoot = scope(
  ["getTranscriptRoot"],
  { homedir30: os.homedir, join59: nodePath.join, TRANSCRIPT_ROOT_ENV: "LETTA_TRANSCRIPT_ROOT" },
  [source("getTranscriptRoot")],
);

const reflection = scope(
  ["appendTranscriptDeltaJsonl", "buildAutoReflectionPayload", "finalizeAutoReflectionPayload",
   "getReflectionTranscriptState"],
  {
    appendFile: fsp.appendFile, mkdir14: fsp.mkdir, readdir9: fsp.readdir, readFile22: fsp.readFile,
    stat13: fsp.stat, writeFile16: fsp.writeFile, join90: nodePath.join,
    getTranscriptRoot: transcriptRoot.getTranscriptRoot, withFileLock: lock.withFileLock,
    safeJsonParseOr: scope(["safeJsonParseOr"], {}, [source("safeJsonParseOr")]).safeJsonParseOr,
    normalizeTranscript: (input) => ({
      records: input.transcript.split("\n").filter(Boolean).map((line) => JSON.parse(line)),
    }),
    stateMutexes: new Map(), Date: ClockDate,
    REFLECTION_STATE_SCHEMA_VERSION: constant("REFLECTION_STATE_SCHEMA_VERSION", TRANSCRIPT),
    LEGACY_MESSAGE_ID_STATE_SCHEMA_VERSION: constant("LEGACY_MESSAGE_ID_STATE_SCHEMA_VERSION", TRANSCRIPT),
  },
  ["sanitizePathSegment2", "withStateLock", "isEligibleCanonicalEntry", "countAssistantRows",
   "normalizeReflectionTranscript", "lineToTranscriptEntry", "ensurePaths", "readTranscriptLines",
   "parseTranscriptRows", "normalizeString", "normalizeNonNegativeInteger", "normalizeV3State",
   "countAssistantRowsThroughMessageId", "migrateMessageIdState",
   "buildUnreflectedStateFromTranscript", "readState", "writeState", "buildPayloadPath",
   "getAgentTranscriptRoot", "getReflectionTranscriptPaths", "appendTranscriptDeltaJsonl",
   "selectUnreflectedTranscriptRange", "entriesForSelection", "getReflectionTranscriptState",
   "buildAutoReflectionPayload", "finalizeAutoReflectionPayload"].map((n) => source(n, TRANSCRIPT)),
);

const noRemote = () => {
  throw new Error("the test homes' memory repositories have no remote");
};
const worktree = scope(
  ["createReflectionMemoryWorktree", "finalizeReflectionMemoryWorktreeUnlocked",
   "integrateMemoryWorkerWorktree"],
  {
    execFile17: promisify(childProcess.execFile), randomUUID39: crypto.randomUUID,
    existsSync45: fs.existsSync, mkdir12: fsp.mkdir, dirname27: nodePath.dirname,
    isAbsolute23: nodePath.isAbsolute, join64: nodePath.join, resolve36: nodePath.resolve,
    GIT_DISABLE_COMMIT_SIGNING_ARGS: constant("GIT_DISABLE_COMMIT_SIGNING_ARGS", "// src/agent/memory-git-signing.ts"),
    GIT_TIMEOUT_MS: constant("GIT_TIMEOUT_MS", WORKTREE),
    HARNESS_GIT_ENV: constant("HARNESS_GIT_ENV", WORKTREE),
    debugLog: () => {}, Date: ClockDate,
    getMemfsServerUrl: noRemote, getAuthToken: noRemote, runGit: noRemote,
  },
  ["runGit4", "tryRunGit", "normalizeGitPath", "buildReflectionWorktreeId",
   "summarizeReflectionCommitSubject", "buildReflectionMergeMessage",
   "createReflectionMemoryWorktree", "getStatusPorcelain", "getCommitCount", "getHead",
   "refreshParentFromOrigin", "cleanupWorktreeAndBranch", "finalizeReflectionMemoryWorktreeUnlocked",
   "integrateMemoryWorkerWorktree"].map((n) => source(n, WORKTREE)),
);

const REMINDER = "// src/cli/helpers/memory-reminder.ts";
const settings = scope(
  ["legacyModeToReflectionSettings", "applyExplicitReflectionOverrides",
   "applyPersistedAgentScopedSettings"],
  {
    DEFAULT_STEP_COUNT: constant("DEFAULT_STEP_COUNT", REMINDER),
    DEFAULT_REFLECTION_SETTINGS: constant("DEFAULT_REFLECTION_SETTINGS", REMINDER,
      { DEFAULT_STEP_COUNT: constant("DEFAULT_STEP_COUNT", REMINDER) }),
  },
  ["isValidStepCount", "normalizeStepCount", "normalizeTrigger", "normalizeMerge",
   "normalizeMergeInstructions", "applyExplicitReflectionOverrides",
   "applyPersistedAgentScopedSettings", "legacyModeToReflectionSettings"]
    .map((n) => source(n, REMINDER)),
);
const DEFAULT_SETTINGS = constant("DEFAULT_SETTINGS");

// getReflectionSettings(agentId) without project settings, over the global settings as the
// settings manager holds them (the file's keys over DEFAULT_SETTINGS).
function reflectionSettings(raw, agentId) {
  const global = { ...DEFAULT_SETTINGS, ...raw };
  let resolved = settings.legacyModeToReflectionSettings(global.memoryReminderInterval);
  resolved = settings.applyExplicitReflectionOverrides(resolved, global);
  if (agentId) {
    resolved = settings.applyPersistedAgentScopedSettings(
      resolved, global.reflectionSettingsByAgent?.[agentId]);
  }
  return resolved;
}

async function answer(request) {
  if (request.home) process.env.HOME = request.home;
  if (request.transcriptRoot) process.env.LETTA_TRANSCRIPT_ROOT = request.transcriptRoot;
  else delete process.env.LETTA_TRANSCRIPT_ROOT;
  clockMs = request.now ? Date.parse(request.now) : null;
  for (const key of ["GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"]) {
    if (request.now) process.env[key] = request.now;
    else delete process.env[key];
  }
  switch (request.op) {
    case "append":
      return reflection.appendTranscriptDeltaJsonl(request.agentId, request.conversationId, request.lines);
    case "start":
      return reflection.buildAutoReflectionPayload(request.agentId, request.conversationId);
    case "finish":
      return reflection.finalizeAutoReflectionPayload(request.agentId, request.conversationId,
        request.payloadPath, request.endSnapshotLine, request.success);
    case "state":
      return reflection.getReflectionTranscriptState(request.agentId, request.conversationId);
    case "worktree":
      return worktree.createReflectionMemoryWorktree({
        parentMemoryDir: request.parentMemoryDir, label: request.label,
      });
    case "finalize":
      return worktree.finalizeReflectionMemoryWorktreeUnlocked(request.worktree, request.options ?? {});
    case "integrate":
      return worktree.integrateMemoryWorkerWorktree(request.worktree, request.options ?? {});
    case "settings":
      return Object.fromEntries((request.agents ?? [""]).map((id) => [id, reflectionSettings(request.global, id)]));
    default:
      throw new Error(`unknown op ${request.op}`);
  }
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  let reply;
  try {
    reply = { ok: (await answer(JSON.parse(line))) ?? null };
  } catch (error) {
    reply = { error: String(error?.stack ?? error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
