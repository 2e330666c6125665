// The official @a2a-js/sdk client against a live Parley server, on one (version, binding)
// interface of its card: every scenario in turn, each one's observations as JSON.
//
//   node scenarios.mjs BASE_URL VERSION BINDING
//
// The card is fetched with the SDK's resolver and narrowed to the interface under test,
// so the SDK's factory builds that binding's transport for that version (the 0.3 ones
// through its compat layer). stdout carries one JSON object per line: `{"gate": KEY}`
// asks the driving test to let the agent's waiting skill for KEY go on; the last line is
// `{"transport": NAME, "results": {SCENARIO: OBSERVATIONS}}`. A scenario that throws
// unexpectedly reports `{"failed": MESSAGE}`.

import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";

import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import {
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";

const [baseUrl, version, binding] = process.argv.slice(2);
const STATES = {
  0: "UNSPECIFIED",
  1: "SUBMITTED",
  2: "WORKING",
  3: "COMPLETED",
  4: "FAILED",
  5: "CANCELED",
  6: "INPUT_REQUIRED",
  7: "REJECTED",
  8: "AUTH_REQUIRED",
};
const ERRORS = { TaskNotFoundError, TaskNotCancelableError, UnsupportedOperationError };

const opened = new Map();
const stdin = createInterface({ input: process.stdin });
stdin.on("line", (line) => opened.get(line.trim())?.());

/** Ask the test to open KEY's gate, and wait until it says it did. */
function openGate(key) {
  const done = new Promise((resolve) => opened.set(key, resolve));
  process.stdout.write(`${JSON.stringify({ gate: key })}\n`);
  return done;
}

function key(prefix) {
  return `${prefix}-${randomUUID().slice(0, 12)}`;
}

function message(text, { skill, taskId = "" } = {}) {
  return {
    messageId: randomUUID(),
    contextId: "",
    taskId,
    role: 1,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: skill === undefined ? undefined : { skill },
    extensions: [],
    referenceTaskIds: [],
  };
}

function request(msg, { returnImmediately = false } = {}) {
  return {
    tenant: "",
    message: msg,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately,
    },
    metadata: undefined,
  };
}

const textOf = (parts) => parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const state = (task) => STATES[task.status?.state] ?? String(task.status?.state);

function summary(event) {
  const { $case: kind, value } = event.payload ?? {};
  const out = { kind };
  if (kind === "task") Object.assign(out, { id: value.id, contextId: value.contextId, state: state(value) });
  if (kind === "statusUpdate") Object.assign(out, { taskId: value.taskId, contextId: value.contextId, state: STATES[value.status?.state] });
  if (kind === "artifactUpdate") {
    Object.assign(out, {
      taskId: value.taskId,
      contextId: value.contextId,
      text: textOf(value.artifact?.parts ?? []),
      artifactId: value.artifact?.artifactId,
      append: value.append,
      lastChunk: value.lastChunk,
    });
  }
  return out;
}

async function sendTask(client, msg, options) {
  const result = await client.sendMessage(request(msg, options));
  if (result.status === undefined) throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
  return result;
}

async function waitForState(client, id, wanted) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const task = await client.getTask({ tenant: "", id });
    if (state(task) === wanted) return task;
    if (Date.now() > deadline) throw new Error(`task ${id} still ${state(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function collect(events) {
  const out = [];
  for await (const event of events) out.push(summary(event));
  return out;
}

/** The SDK error class a call threw (by `instanceof`, else the constructor's name), and
 * that of its `cause` (the SDK wraps an error that arrives inside an SSE stream). */
async function raised(call) {
  const named = (error) =>
    Object.keys(ERRORS).find((name) => error instanceof ERRORS[name]) ?? error?.constructor?.name ?? null;
  try {
    await call();
  } catch (error) {
    return { thrown: named(error), cause: error?.cause ? named(error.cause) : null, message: String(error?.message) };
  }
  return { thrown: null, cause: null, message: null };
}

const SCENARIOS = {
  async send(client) {
    const text = key("echo");
    const msg = message(text, { skill: "echo" });
    const task = await sendTask(client, msg);
    const first = task.history[0];
    return {
      state: state(task),
      hasIds: Boolean(task.id && task.contextId),
      artifacts: task.artifacts.map((a) => textOf(a.parts)),
      text,
      firstMessage: [first?.messageId === msg.messageId, first?.taskId === task.id, first?.contextId === task.contextId],
    };
  },

  async stream(client) {
    const events = await collect(client.sendMessageStream(request(message(key("stream"), { skill: "chunks" }))));
    const stored = await client.getTask({ tenant: "", id: events[0]?.id });
    return { events, stored: { state: state(stored), artifacts: stored.artifacts.map((a) => textOf(a.parts)) } };
  },

  async get(client) {
    const asked = await sendTask(client, message(key("history"), { skill: "greet" }));
    const done = await sendTask(client, message("Grace", { taskId: asked.id }));
    const full = await client.getTask({ tenant: "", id: asked.id });
    const last = await client.getTask({ tenant: "", id: asked.id, historyLength: 1 });
    return {
      asked: state(asked),
      same: [done.id === asked.id, done.contextId === asked.contextId],
      state: state(full),
      artifacts: full.artifacts.map((a) => textOf(a.parts)),
      history: full.history.map((m) => textOf(m.parts)).slice(1),
      lastOne: last.history.map((m) => m.messageId),
      lastOfFull: full.history.slice(-1).map((m) => m.messageId),
    };
  },

  async cancel(client) {
    const text = key("cancel");
    const task = await sendTask(client, message(text, { skill: "until_cancelled" }), { returnImmediately: true });
    await waitForState(client, task.id, "WORKING");
    const cancelled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    const stored = await client.getTask({ tenant: "", id: task.id });
    return { key: text, same: cancelled.id === task.id, state: state(cancelled), stored: state(stored) };
  },

  async subscribe(client) {
    const text = key("subscribe");
    const task = await sendTask(client, message(text, { skill: "background" }), { returnImmediately: true });
    await waitForState(client, task.id, "WORKING");
    const stream = client.resubscribeTask({ tenant: "", id: task.id });
    const first = summary((await stream.next()).value);
    await openGate(text);
    const rest = [];
    for await (const event of stream) rest.push(summary(event));
    return { key: text, taskId: task.id, first, rest };
  },

  async errors(client) {
    const done = await sendTask(client, message(key("done"), { skill: "echo" }));
    return {
      "get-unknown": await raised(() => client.getTask({ tenant: "", id: "no-such-task" })),
      "cancel-terminal": await raised(() => client.cancelTask({ tenant: "", id: done.id, metadata: undefined })),
      "subscribe-terminal": await raised(() => collect(client.resubscribeTask({ tenant: "", id: done.id }))),
      "send-terminal": await raised(() => client.sendMessage(request(message("x", { taskId: done.id })))),
    };
  },
};

async function main() {
  const card = await new DefaultAgentCardResolver().resolve(baseUrl);
  const listed = card.supportedInterfaces.filter(
    (i) => i.protocolBinding === binding && i.protocolVersion === version,
  );
  if (listed.length !== 1) throw new Error(`the card lists ${version} ${binding} ${listed.length} times`);
  const compat = { legacyCompat: { enabled: true } };
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory(compat),
      new RestTransportFactory(compat),
      new GrpcTransportFactory(compat),
    ],
    preferredTransports: [binding],
  });
  const client = await factory.createFromAgentCard({ ...card, supportedInterfaces: listed });
  const results = {};
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    try {
      results[name] = await scenario(client);
    } catch (error) {
      results[name] = { failed: `${error?.constructor?.name}: ${error?.message}` };
    }
  }
  const transport = client.transport?.constructor?.name?.replace(/^_/, "") ?? null;
  process.stdout.write(`${JSON.stringify({ transport, url: listed[0].url, results })}\n`);
}

main()
  .catch((error) => {
    process.stdout.write(`${JSON.stringify({ fatal: `${error?.constructor?.name}: ${error?.message}` })}\n`);
    process.exitCode = 1;
  })
  .finally(() => stdin.close());
