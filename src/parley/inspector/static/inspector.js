// The inspector page: the card and its checks, a chat over any interface the card offers
// (streamed when it can be), each call's events on a timeline, the task list and the push
// deliveries. Every call goes to the agent this page came from, with the page's credentials.

import { Agent, V1, callable, encodeMessage, interfacesOf, readEvent, readTask, reachable } from "./a2a.js";
import { capabilityChecks, interfaceChecks, requiredFields } from "./checks.js";

const ROOT = new URL("..", location.href);
const $ = (id) => document.getElementById(id);
const page = { card: null, faces: [], contextId: "", taskId: "", streams: 0, nextPage: "" };

/** A DOM element; children are nodes or text (never parsed as HTML). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function headers() {
  const name = sessionStorage.getItem("parley.header");
  const value = sessionStorage.getItem("parley.value");
  return name && value ? { [name]: value } : {};
}

async function api(path) {
  const response = await fetch(new URL(path, location.href), { headers: headers() });
  const body = await response.json();
  return { status: response.status, body };
}

function showCredentials(why) {
  $("credentials").hidden = false;
  if (why) $("credentials-why").textContent = why;
}

function schemeHint(card) {
  for (const scheme of Object.values(card.securitySchemes || {})) {
    const key = scheme.apiKeySecurityScheme || (scheme.type === "apiKey" ? scheme : null);
    if (key && (key.location || key.in) === "header") return key.name;
  }
  return "Authorization";
}

// ---------------------------------------------------------------- card

function renderCard(card) {
  $("agent-name").textContent = card.name || "Agent";
  document.title = `${card.name} — Parley inspector`;
  const caps = card.capabilities || {};
  const flags = ["streaming", "pushNotifications", "extendedAgentCard"].filter((name) => caps[name]);
  const skills = (card.skills || []).map((skill) =>
    el("div", { class: "skill" },
      el("strong", {}, skill.name || skill.id), " ", el("span", { class: "muted" }, skill.description || ""),
      el("div", {}, (skill.tags || []).map((tag) => el("span", { class: "tag" }, tag)))));
  $("card").replaceChildren(
    el("p", {}, card.description || ""),
    el("dl", {},
      el("dt", {}, "Version"), el("dd", {}, card.version || ""),
      el("dt", {}, "Provider"), el("dd", {}, (card.provider && card.provider.organization) || "—"),
      el("dt", {}, "Capabilities"), el("dd", {}, flags.join(", ") || "none"),
      el("dt", {}, "Input"), el("dd", {}, (card.defaultInputModes || []).join(", ")),
      el("dt", {}, "Output"), el("dd", {}, (card.defaultOutputModes || []).join(", ")),
      el("dt", {}, "Security"), el("dd", {}, Object.keys(card.securitySchemes || {}).join(", ") || "none"),
      el("dt", {}, "Interfaces"),
      el("dd", {}, page.faces.map((face) => el("div", { class: "mono" },
        `${face.binding} ${face.version} ${face.url}`, reachable(face) ? "" : " (not callable from a page)")))),
    el("h3", {}, `Skills (${(card.skills || []).length})`), ...skills);
  $("card-json").textContent = JSON.stringify(card, null, 2);
}

function renderChecks(results) {
  $("checks").append(...results.map((check) =>
    el("li", { class: check.ok === null ? "skip" : check.ok ? "ok" : "bad" },
      check.name, " ", el("span", { class: "detail" }, check.detail))));
}

async function runChecks(card) {
  $("checks").replaceChildren();
  renderChecks(requiredFields(card));
  renderChecks(await interfaceChecks(page.faces, headers()));
  renderChecks(await capabilityChecks(card, page.faces, headers()));
  $("checks").dataset.done = "true";
}

// ---------------------------------------------------------------- parts

function renderParts(parts) {
  return parts.map((part) => {
    if (part.type === "text") return el("span", { class: "text" }, part.text);
    if (part.type === "data") return el("pre", { class: "data" }, JSON.stringify(part.data, null, 2));
    const label = part.name || part.url || "file";
    const href = part.url || `data:${part.mediaType || "application/octet-stream"};base64,${part.bytes}`;
    const link = el("a", { href, download: part.name || "file", rel: "noopener" }, label);
    const image = part.bytes && /^image\//.test(part.mediaType) ? el("img", { src: href, alt: label, width: "160" }) : null;
    return el("div", { class: "file" }, el("span", { class: "muted" }, "file "), link, ` ${part.mediaType || ""}`, image);
  });
}

// ---------------------------------------------------------------- chat

function fillInterfaces() {
  const usable = page.faces.filter(reachable);
  $("interface").replaceChildren(...usable.map((face) =>
    el("option", { value: String(page.faces.indexOf(face)) }, `${face.binding} ${face.version}`)));
  const streams = Boolean((page.card.capabilities || {}).streaming);
  $("streaming").checked = streams;
  $("streaming").disabled = !streams;
}

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function composedParts() {
  const parts = [];
  const text = $("message").value.trim();
  if (text) parts.push({ text });
  const file = $("file").files[0];
  if (file) parts.push({ file: { name: file.name, mediaType: file.type || "application/octet-stream", bytes: await readFile(file) } });
  const data = $("data").value.trim();
  if (data) parts.push({ data: JSON.parse(data) });
  return parts;
}

class Answer {
  constructor() {
    this.node = el("div", { class: "bubble agent" }, el("span", { class: "state" }, "sent"));
    this.artifacts = new Map();
    $("transcript").append(this.node);
  }

  state(text) {
    this.node.querySelector(".state").textContent = text;
  }

  add(event) {
    if (event.kind === "message") this.node.append(...renderParts(event.message.parts));
    if (event.kind === "status") {
      this.state(event.state);
      if (event.message) this.node.append(...renderParts(event.message.parts));
    }
    if (event.kind === "task") {
      this.state(event.task.state);
      if (event.task.statusMessage) this.node.append(...renderParts(event.task.statusMessage.parts));
      for (const artifact of event.task.artifacts) this.artifact(artifact, false);
    }
    if (event.kind === "artifact") this.artifact(event.artifact, event.append);
    $("transcript").scrollTop = $("transcript").scrollHeight;
  }

  artifact(artifact, append) {
    let box = this.artifacts.get(artifact.id);
    if (!box) {
      box = el("div", { class: "artifact", "data-artifact": artifact.id });
      this.artifacts.set(artifact.id, box);
      this.node.append(box);
    }
    if (!append) box.replaceChildren();
    const last = box.lastElementChild;
    for (const part of artifact.parts) {
      if (append && part.type === "text" && last && last.className === "text") last.textContent += part.text;
      else box.append(...renderParts([part]));
    }
  }
}

function timeline(face, streaming) {
  const number = ++page.streams;
  const list = el("ol");
  const started = performance.now();
  const block = el("div", { class: "stream", "data-stream": String(number) },
    el("strong", {}, `#${number} ${streaming ? "stream" : "send"} · ${face.binding} ${face.version}`),
    el("span", { class: "muted" }, ` at ${new Date().toLocaleTimeString()}`), list);
  if (page.streams === 1) $("timeline").replaceChildren();
  $("timeline").prepend(block);
  return (what, id) => {
    const at = `+${Math.round(performance.now() - started)} ms`;
    list.append(el("li", {}, el("span", { class: "at" }, at), what, id ? el("span", { class: "muted" }, ` id ${id}`) : ""));
  };
}

function describe(event) {
  if (event.kind === "status") return `status-update ${event.state}`;
  if (event.kind === "artifact") return `artifact-update ${event.artifact.id}${event.append ? " (append)" : ""}${event.lastChunk ? " (last)" : ""}`;
  if (event.kind === "task") return `task ${event.task.id} ${event.task.state}`;
  return event.kind;
}

function remember(event) {
  const task = event.kind === "task" ? event.task : null;
  const contextId = task ? task.contextId : event.contextId || (event.message && event.message.contextId);
  if (contextId) page.contextId = contextId;
  const taskId = task ? task.id : event.taskId;
  const state = task ? task.state : event.state;
  if (taskId && state) page.taskId = ["input-required", "auth-required"].includes(state) ? taskId : "";
  $("conversation").textContent = page.contextId ? `context ${page.contextId}` : "";
}

async function send(submit) {
  submit.preventDefault();
  const face = page.faces[Number($("interface").value)];
  const streaming = $("streaming").checked;
  let parts;
  try {
    parts = await composedParts();
  } catch (error) {
    $("transcript").append(el("p", { class: "error" }, `Data is not JSON: ${error.message}`));
    return;
  }
  if (!parts.length) return;
  $("transcript").append(el("div", { class: "bubble user" }, renderParts(parts.map(plain))));
  $("message").value = "";
  $("file").value = "";
  $("data").value = "";
  const agent = new Agent(face, headers());
  const message = encodeMessage(face, parts, page);
  const answer = new Answer();
  const mark = timeline(face, streaming);
  $("send").disabled = true;
  try {
    const take = (value, id) => {
      const event = readEvent(value);
      mark(describe(event), id);
      remember(event);
      answer.add(event);
    };
    if (streaming) await agent.stream("stream", { message }, take);
    else take(await agent.call("send", { message }));
    mark("end");
  } catch (error) {
    mark(`error ${error.name}: ${error.message}`);
    answer.node.append(el("p", { class: "error" }, `${error.name}: ${error.message}`));
    if (error.status === 401) showCredentials("The agent refused the credentials: give others.");
  } finally {
    $("send").disabled = false;
  }
  answer.node.dataset.done = "true";
  loadTasks();
}

function plain(part) {
  if (part.text !== undefined) return { type: "text", text: part.text };
  if (part.data !== undefined) return { type: "data", data: part.data };
  return { type: "file", ...part.file };
}

// ---------------------------------------------------------------- tasks

function listingAgent() {
  const face = page.faces.find((each) => reachable(each) && each.version === V1);
  return face ? new Agent(face, headers()) : null;
}

async function loadTasks(more = false) {
  const agent = listingAgent();
  const body = $("tasks").tBodies[0];
  if (!agent) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: "4" }, "Listing tasks needs an interface of the current protocol version.")));
    return;
  }
  const params = { pageSize: 20 };
  const contextId = $("filter-context").value.trim();
  if (contextId) params.contextId = contextId;
  if ($("filter-state").value) params.status = $("filter-state").value;
  if (more) params.pageToken = page.nextPage;
  try {
    const result = await agent.call("list", params);
    const rows = (result.tasks || []).map(readTask).map((task) =>
      el("tr", { class: "task", "data-task": task.id, onclick: () => showTask(task.id) },
        el("td", { class: "mono" }, task.id), el("td", {}, task.state),
        el("td", { class: "mono" }, task.contextId), el("td", {}, task.timestamp)));
    if (more) body.append(...rows);
    else body.replaceChildren(...rows);
    page.nextPage = result.nextPageToken || "";
    $("more-tasks").hidden = !page.nextPage;
  } catch (error) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: "4", class: "error" }, `${error.name}: ${error.message}`)));
  }
  $("tasks").dataset.loaded = String(Date.now());
}

async function showTask(id) {
  const agent = listingAgent();
  try {
    const task = readTask(await agent.call("get", { id, historyLength: 100 }));
    $("task-detail").replaceChildren(el("div", {},
      el("h3", {}, `Task ${task.id} · ${task.state}`),
      el("h3", {}, `History (${task.history.length})`),
      task.history.map((message) => el("div", { class: `bubble ${message.role === "user" ? "user" : "agent"}` },
        el("span", { class: "state" }, message.role), renderParts(message.parts))),
      el("h3", {}, `Artifacts (${task.artifacts.length})`),
      task.artifacts.map((artifact) => el("div", { class: "artifact" },
        el("strong", {}, artifact.name || artifact.id), renderParts(artifact.parts)))));
  } catch (error) {
    $("task-detail").replaceChildren(el("p", { class: "error" }, `${error.name}: ${error.message}`));
  }
}

// ---------------------------------------------------------------- deliveries

async function loadDeliveries() {
  const { status, body } = await api("api/deliveries");
  if (status !== 200 || body.deliveries === null) return;
  $("deliveries-section").hidden = false;
  if (!body.deliveries.length) {
    const none = el("td", { colspan: "6", class: "muted" }, "No notifications waiting or given up on.");
    $("deliveries").tBodies[0].replaceChildren(el("tr", {}, none));
    return;
  }
  $("deliveries").tBodies[0].replaceChildren(...body.deliveries.map((row) =>
    el("tr", {}, el("td", {}, String(row.id)), el("td", { class: "mono" }, row.taskId),
      el("td", { class: "mono" }, row.configId), el("td", {}, row.state),
      el("td", {}, String(row.attempts)), el("td", {}, row.lastError || ""))));
}

// ---------------------------------------------------------------- start

async function start() {
  const who = await api("api/whoami");
  const card = await (await fetch(new URL(".well-known/agent-card.json", ROOT))).json();
  page.card = card;
  page.faces = callable(interfacesOf(card), location.origin);
  $("credential-header").value = sessionStorage.getItem("parley.header") || schemeHint(card);
  renderCard(card);
  if (who.status === 401 || who.status === 403) {
    showCredentials(`${who.body.error ? who.body.error.message || "" : ""} This agent asks for credentials: they are kept in this tab only and sent as a header with each call.`);
    $("who").textContent = "no credentials";
    return;
  }
  $("who").textContent = `as ${who.body.caller}`;
  fillInterfaces();
  await Promise.all([runChecks(card), loadTasks(), loadDeliveries()]);
  document.body.dataset.ready = "true";
}

$("credentials").addEventListener("submit", (submit) => {
  submit.preventDefault();
  sessionStorage.setItem("parley.header", $("credential-header").value.trim());
  sessionStorage.setItem("parley.value", $("credential-value").value);
  location.reload();
});
$("credentials-forget").addEventListener("click", () => {
  sessionStorage.removeItem("parley.header");
  sessionStorage.removeItem("parley.value");
  location.reload();
});
$("credentials-toggle").addEventListener("click", () => { $("credentials").hidden = !$("credentials").hidden; });
$("chat").addEventListener("submit", send);
$("new-conversation").addEventListener("click", () => {
  page.contextId = "";
  page.taskId = "";
  $("transcript").replaceChildren();
  $("conversation").textContent = "";
});
$("task-filters").addEventListener("submit", (submit) => { submit.preventDefault(); loadTasks(); });
$("more-tasks").addEventListener("click", () => loadTasks(true));
start().catch((error) => {
  $("card").replaceChildren(el("p", { class: "error" }, `The inspector could not start: ${error.message}`));
});
