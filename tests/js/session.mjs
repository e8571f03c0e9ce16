// The chapter's src/session.ts, transcribed to plain JavaScript (no types, no npm packages).
// The chapter elides the message literals ("return { ... }"); they are written here as
// TypeScript would run them: each role's own fields after role and content, and the
// assistant's `toolCalls: item.toolCalls` as the calls() guard let them through (kept whole:
// extra keys survive, in the order written).
import { appendFile, readFile } from "node:fs/promises";

function record(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
}

function calls(value) {
  return (
    Array.isArray(value) &&
    value.every((call) => {
      const item = record(call);
      return (
        item !== undefined &&
        typeof item.id === "string" &&
        typeof item.name === "string" &&
        "input" in item
      );
    })
  );
}

export function parseSessionMessage(value) {
  const item = record(value);
  if (item === undefined || typeof item.role !== "string" || typeof item.content !== "string") {
    return undefined;
  }
  if (item.role === "user") return { role: "user", content: item.content };
  if (item.role === "assistant" && calls(item.toolCalls)) {
    return { role: "assistant", content: item.content, toolCalls: item.toolCalls };
  }
  if (item.role === "tool" && typeof item.toolCallId === "string" && typeof item.isError === "boolean") {
    return { role: "tool", content: item.content, toolCallId: item.toolCallId, isError: item.isError };
  }
  return undefined;
}

export async function appendSession(path, message) {
  await appendFile(path, `${JSON.stringify(message)}\n`, "utf8");
}

export async function loadSession(path) {
  let text;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (error.code === "ENOENT") return [];
    throw error;
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line, index) => {
      let value;
      try {
        value = JSON.parse(line);
      } catch {
        throw new Error(`invalid session JSON at line ${index + 1}`);
      }
      const message = parseSessionMessage(value);
      if (message === undefined) throw new Error(`invalid session record at line ${index + 1}`);
      return message;
    });
}
