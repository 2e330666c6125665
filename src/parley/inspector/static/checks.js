// The card's checks: its required members (in each version's shape it carries), each
// interface reachable from this page (R-CARD-4), and each declared capability true — probed
// with calls that change nothing: a task id no one has, whose answer tells whether the
// operation is served (TaskNotFound) or refused as unsupported.

import { A2AError, Agent, V03, V1, reachable } from "./a2a.js";

const REQUIRED = {
  [V1]: ["name", "description", "version", "supportedInterfaces", "capabilities",
    "defaultInputModes", "defaultOutputModes", "skills"],
  [V03]: ["name", "description", "version", "url", "protocolVersion", "capabilities",
    "defaultInputModes", "defaultOutputModes", "skills"],
};
const SKILL_REQUIRED = ["id", "name", "description", "tags"];
const PROBE_ID = "parley-inspector-probe-no-such-task";
const UNSUPPORTED = /unsupported|not[ _]?supported|not[ _]?configured|-3200[347]/i;

function present(value) {
  return value !== undefined && value !== null && value !== "";
}

/** [{name, ok, detail}] for the card's required members. */
export function requiredFields(card) {
  const results = [];
  const versions = [];
  if (card.supportedInterfaces) versions.push(V1);
  if (card.protocolVersion) versions.push(V03);
  if (!versions.length) versions.push(V1);
  for (const version of versions) {
    const missing = REQUIRED[version].filter((name) => !present(card[name]));
    results.push({
      name: `required members (${version} shape)`,
      ok: missing.length === 0,
      detail: missing.length ? `missing: ${missing.join(", ")}` : "all present",
    });
  }
  const faces = card.supportedInterfaces || [];
  const badFaces = faces.filter((f) => !f.url || !f.protocolBinding || !f.protocolVersion);
  if (card.supportedInterfaces) {
    results.push({
      name: "interfaces",
      ok: faces.length > 0 && badFaces.length === 0,
      detail: faces.length ? `${faces.length} listed, ${badFaces.length} incomplete` : "none listed",
    });
  }
  const skills = card.skills || [];
  const badSkills = skills.filter((s) => SKILL_REQUIRED.some((name) => !present(s[name])));
  results.push({
    name: "skills",
    ok: badSkills.length === 0,
    detail: `${skills.length} declared` + (badSkills.length ? `, ${badSkills.length} incomplete` : ""),
  });
  return results;
}

/** How the probe's answer reads: "served", "unsupported" or an error to report. */
async function probe(agent, name, streaming) {
  try {
    if (streaming) {
      const controller = new AbortController();
      await agent.stream(name, { id: PROBE_ID }, () => controller.abort(), controller.signal);
    } else {
      await agent.call(name, name === "extendedCard" ? {} : { id: PROBE_ID });
    }
    return "served";
  } catch (error) {
    if (!(error instanceof A2AError)) {
      return error.name === "AbortError" ? "served" : `not reachable: ${error.message}`;
    }
    if (error.status === 401 || error.status === 403) return "credentials refused";
    if (UNSUPPORTED.test(`${error.name} ${error.code} ${error.message}`)) return "unsupported";
    return "served";
  }
}

/** [{name, ok, detail}] for each interface: reachable from this page, with an A2A answer. */
export async function interfaceChecks(faces, headers) {
  const results = [];
  for (const face of faces) {
    const name = `${face.binding} ${face.version} at ${face.url}`;
    if (!reachable(face)) {
      results.push({ name, ok: null, detail: "listed; a page cannot call gRPC, so not checked here" });
      continue;
    }
    const answer = await probe(new Agent(face, headers), "get", false);
    const where = face.callUrl ? ` (called at ${face.callUrl}, this page's address)` : "";
    results.push({ name, ok: answer === "served", detail: (answer === "served" ? "answers" : answer) + where });
  }
  return results;
}

/** [{name, ok, detail}]: each capability the card declares (or not) against the agent's
 * answers on its first interface this page can call. */
export async function capabilityChecks(card, faces, headers) {
  const face = faces.find(reachable);
  if (!face) return [{ name: "capabilities", ok: null, detail: "no interface this page can call" }];
  const agent = new Agent(face, headers);
  const capabilities = card.capabilities || {};
  const declared = {
    streaming: Boolean(capabilities.streaming),
    pushNotifications: Boolean(capabilities.pushNotifications),
    extendedAgentCard: Boolean(capabilities.extendedAgentCard || card.supportsAuthenticatedExtendedCard),
  };
  const answers = {
    streaming: await probe(agent, "subscribe", true),
    pushNotifications: await probe(agent, "pushConfigs", false),
  };
  if (declared.extendedAgentCard) answers.extendedAgentCard = await probe(agent, "extendedCard", false);
  return Object.entries(answers).map(([name, answer]) => {
    const served = answer === "served";
    const known = served || answer === "unsupported";
    return {
      name: `${name}: ${declared[name] ? "declared" : "not declared"}`,
      ok: known ? served === declared[name] : null,
      detail: known ? (served ? "the agent serves it" : "the agent refuses it as unsupported") : answer,
    };
  });
}
