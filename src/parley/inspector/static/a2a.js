// The A2A calls the inspector makes from the browser, in either protocol version, over
// JSON-RPC or HTTP+JSON (gRPC cannot be called from a page), and the three JSON shapes they
// answer in (1.0; 0.3 JSON-RPC; 0.3 HTTP+JSON, ProtoJSON) read into one plain form.

export const V1 = "1.0";
export const V03 = "0.3";
export const HTTP_BINDINGS = ["JSONRPC", "HTTP+JSON"];

const METHODS = {
  send: ["SendMessage", "message/send", "POST", "/message:send"],
  stream: ["SendStreamingMessage", "message/stream", "POST", "/message:stream"],
  get: ["GetTask", "tasks/get", "GET", "/tasks/{id}"],
  list: ["ListTasks", null, "GET", "/tasks"],
  subscribe: ["SubscribeToTask", "tasks/resubscribe", "POST", "/tasks/{id}:subscribe"],
  pushConfigs: [
    "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/list",
    "GET",
    "/tasks/{id}/pushNotificationConfigs",
  ],
  extendedCard: ["GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard", "GET", null],
};

/** Every interface a card lists, 1.0's supportedInterfaces first, then a 0.3 card's own. */
export function interfacesOf(card) {
  const found = [];
  const add = (url, binding, version, tenant) => {
    const major = String(version || "").startsWith("0.3") ? V03 : V1;
    const known = found.some(
      (each) => each.url === url && each.binding === binding && each.version === major,
    );
    if (url && binding && !known) found.push({ url, binding, version: major, tenant: tenant || "" });
  };
  for (const each of card.supportedInterfaces || []) {
    add(each.url, each.protocolBinding, each.protocolVersion, each.tenant);
  }
  if (card.url && String(card.protocolVersion || "").startsWith("0.3")) {
    add(card.url, card.preferredTransport || "JSONRPC", V03);
    for (const each of card.additionalInterfaces || []) add(each.url, each.transport, V03);
  }
  return found;
}

export function reachable(face) {
  return HTTP_BINDINGS.includes(face.binding);
}

/** The interfaces with the URL this page calls each at: its own when it is of the page's
 * origin, else the same path at the page's origin (the page came from this agent, reached
 * at another name: `localhost` for `127.0.0.1`, or through a proxy). */
export function callable(faces, origin) {
  return faces.map((face) => {
    if (!reachable(face)) return face;
    const url = new URL(face.url);
    return url.origin === origin ? face : { ...face, callUrl: origin + url.pathname.replace(/\/$/, "") };
  });
}

function shape(face) {
  if (face.version === V1) return "v1";
  return face.binding === "JSONRPC" ? "rpc03" : "rest03";
}

/** The outgoing message, in the interface's shape. `parts`: {text} | {file: {name, mediaType,
 * bytes (base64)}} | {data}. */
export function encodeMessage(face, parts, ids) {
  const style = shape(face);
  const encoded = parts.map((part) => encodePart(style, part));
  const message = { messageId: crypto.randomUUID() };
  if (ids.contextId) message.contextId = ids.contextId;
  if (ids.taskId) message.taskId = ids.taskId;
  if (style === "rpc03") return { ...message, kind: "message", role: "user", parts: encoded };
  if (style === "rest03") return { ...message, role: "ROLE_USER", content: encoded };
  return { ...message, role: "ROLE_USER", parts: encoded };
}

function encodePart(style, part) {
  if (part.text !== undefined) return style === "rpc03" ? { kind: "text", text: part.text } : { text: part.text };
  if (part.data !== undefined) {
    if (style === "rpc03") return { kind: "data", data: part.data };
    return style === "rest03" ? { data: { data: part.data } } : { data: part.data };
  }
  const { name, mediaType, bytes } = part.file;
  if (style === "rpc03") return { kind: "file", file: { bytes, name, mimeType: mediaType } };
  if (style === "rest03") return { file: { fileWithBytes: bytes, mimeType: mediaType } };
  return { raw: bytes, mediaType, filename: name };
}

/** A part in plain form: {type: "text", text} | {type: "file", name, mediaType, bytes, url}
 * | {type: "data", data}. */
export function readPart(part) {
  if (part.kind === "text" || (part.kind === undefined && typeof part.text === "string")) {
    return { type: "text", text: part.text };
  }
  if (part.kind === "data") return { type: "data", data: part.data };
  if (part.data !== undefined) {
    const inner = part.data && typeof part.data === "object" && "data" in part.data && Object.keys(part.data).length === 1;
    return { type: "data", data: inner ? part.data.data : part.data };
  }
  const file = part.file || part;
  return {
    type: "file",
    name: file.name || file.filename || "",
    mediaType: file.mimeType || file.mediaType || "",
    bytes: file.bytes || file.fileWithBytes || file.raw || "",
    url: file.uri || file.fileWithUri || file.url || "",
  };
}

export function readState(state) {
  return String(state || "").replace(/^TASK_STATE_/, "").toLowerCase().replace(/_/g, "-");
}

export function readMessage(message) {
  return {
    role: String(message.role || "").replace(/^ROLE_/, "").toLowerCase(),
    parts: (message.parts || message.content || []).map(readPart),
    taskId: message.taskId || "",
    contextId: message.contextId || "",
  };
}

export function readTask(task) {
  return {
    id: task.id,
    contextId: task.contextId || "",
    state: readState(task.status && task.status.state),
    timestamp: (task.status && task.status.timestamp) || "",
    statusMessage: task.status && task.status.message ? readMessage(task.status.message) : null,
    history: (task.history || []).map(readMessage),
    artifacts: (task.artifacts || []).map((artifact) => ({
      id: artifact.artifactId,
      name: artifact.name || "",
      parts: (artifact.parts || []).map(readPart),
    })),
  };
}

/** One stream event or send result in plain form: {kind: task|message|status|artifact, ...}. */
export function readEvent(value) {
  const kind = value.kind;
  if (kind === "task" || value.task) return { kind: "task", task: readTask(value.task || value) };
  if (kind === "message" || value.message || value.msg) {
    return { kind: "message", message: readMessage(value.message || value.msg || value) };
  }
  const status = kind === "status-update" ? value : value.statusUpdate;
  if (status) {
    return {
      kind: "status",
      taskId: status.taskId,
      contextId: status.contextId,
      state: readState(status.status && status.status.state),
      message: status.status && status.status.message ? readMessage(status.status.message) : null,
    };
  }
  const update = kind === "artifact-update" ? value : value.artifactUpdate;
  if (update) {
    return {
      kind: "artifact",
      taskId: update.taskId,
      contextId: update.contextId,
      append: Boolean(update.append),
      lastChunk: Boolean(update.lastChunk),
      artifact: {
        id: update.artifact.artifactId,
        name: update.artifact.name || "",
        parts: (update.artifact.parts || []).map(readPart),
      },
    };
  }
  return { kind: "unknown", value };
}

/** An error an agent answered with. */
export class A2AError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || body || {};
    const reason = ((error.details || []).find((d) => d.reason) || {}).reason;
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code;
    this.name = reason || error.type || error.status || "A2AError";
  }
}

/** Calls to one interface, with the page's credentials as headers. */
export class Agent {
  constructor(face, headers) {
    this.face = face;
    this.headers = headers;
    this.id = 0;
  }

  _head(accept) {
    const head = { ...this.headers, Accept: accept, "Content-Type": "application/json" };
    if (this.face.version === V1) head["A2A-Version"] = V1;
    return head;
  }

  _rpc(name, params) {
    const method = METHODS[name][this.face.version === V1 ? 0 : 1];
    if (!method) throw new A2AError(0, { message: `${name} is not in this protocol version` });
    const body = { jsonrpc: "2.0", id: ++this.id, method, params: { ...params } };
    if (name === "pushConfigs" && this.face.version === V1) {
      body.params = { taskId: params.id };
    }
    if (this.face.tenant && this.face.version === V1) body.params.tenant = this.face.tenant;
    return { url: this.face.callUrl || this.face.url, init: { method: "POST", body: JSON.stringify(body) } };
  }

  _rest(name, params) {
    const [, , verb, template] = METHODS[name];
    let path = template || (this.face.version === V1 ? "/extendedAgentCard" : "/card");
    path = path.replace("{id}", encodeURIComponent(params.id || ""));
    if (this.face.version !== V1) path = "/v1" + path;
    else if (this.face.tenant) path = "/" + encodeURIComponent(this.face.tenant) + path;
    const query = new URLSearchParams();
    if (verb === "GET") {
      for (const [key, value] of Object.entries(params)) {
        if (key !== "id" && value !== undefined && value !== "") query.set(key, value);
      }
    }
    const url = (this.face.callUrl || this.face.url).replace(/\/$/, "") + path + (query.size ? "?" + query : "");
    const init = { method: verb };
    if (verb === "POST") init.body = JSON.stringify(params.message ? params : {});
    return { url, init };
  }

  _request(name, params, accept) {
    const built = this.face.binding === "JSONRPC" ? this._rpc(name, params) : this._rest(name, params);
    built.init.headers = this._head(accept);
    if (built.init.method === "GET") delete built.init.headers["Content-Type"];
    return built;
  }

  /** A unary call's result (JSON-RPC's `result`, HTTP+JSON's body). */
  async call(name, params) {
    const { url, init } = this._request(name, params, "application/json");
    const response = await fetch(url, init);
    const text = await response.text();
    const body = text ? JSON.parse(text) : {};
    if (!response.ok) throw new A2AError(response.status, body);
    if (this.face.binding !== "JSONRPC") return body;
    if (body.error) throw new A2AError(response.status, body);
    return body.result;
  }

  /** A streaming call: `onEvent(value, sseId)` for each event's JSON, until the stream ends. */
  async stream(name, params, onEvent, signal) {
    const { url, init } = this._request(name, params, "text/event-stream");
    const response = await fetch(url, { ...init, signal });
    if (!response.ok || !(response.headers.get("content-type") || "").includes("event-stream")) {
      const text = await response.text();
      throw new A2AError(response.status, text ? JSON.parse(text) : {});
    }
    for await (const event of sse(response.body)) {
      const value = JSON.parse(event.data);
      if (this.face.binding === "JSONRPC") {
        if (value.error) throw new A2AError(200, value);
        onEvent(value.result, event.id);
      } else if (value.error) {
        throw new A2AError(200, value);
      } else {
        onEvent(value, event.id);
      }
    }
  }
}

/** Server-Sent Events from a fetch body (WHATWG HTML §9.2, the fields A2A uses). */
export async function* sse(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data = [];
  let id = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") {
        if (data.length) yield { data: data.join("\n"), id };
        data = [];
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let text = colon < 0 ? "" : line.slice(colon + 1);
      if (text.startsWith(" ")) text = text.slice(1);
      if (field === "data") data.push(text);
      else if (field === "id") id = text;
    }
  }
  if (data.length) yield { data: data.join("\n"), id };
}
