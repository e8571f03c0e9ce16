// The chapter's src/context.ts, transcribed: the units loop as the chapter prints it, the
// budget loop as its diagram draws it, and estimateContextChars as its text describes it.
export function estimateContextChars(messages) {
  let total = 0;
  messages.forEach((message, index) => {
    let serialized;
    try {
      serialized = JSON.stringify(message);
    } catch (error) {
      throw new Error(`message ${index} cannot be serialized: ${error.message}`);
    }
    if (serialized === undefined) throw new Error(`message ${index} cannot be serialized`);
    total += serialized.length + 1; // UTF-16 units, plus one separator
  });
  return total;
}

export function contextUnits(messages) {
  const units = [];
  for (let index = messages.length - 1; index >= 0; ) {
    const message = messages[index];
    if (message.role === "tool") {
      let assistantIndex = -1;
      for (let i = index - 1; i >= 0; i--) {
        const candidate = messages[i];
        if (
          candidate.role === "assistant" &&
          candidate.toolCalls.some((call) => call.id === message.toolCallId)
        ) {
          assistantIndex = i;
          break;
        }
      }
      if (assistantIndex >= 0) {
        units.unshift(messages.slice(assistantIndex, index + 1));
        index = assistantIndex - 1;
        continue;
      }
    }
    units.unshift([message]);
    index--;
  }
  return units;
}

export function trimContext(messages, maxChars) {
  const units = contextUnits(messages);
  let kept = [];
  for (const unit of units.reverse()) {
    if (estimateContextChars([...unit, ...kept]) > maxChars) {
      if (kept.length === 0) {
        throw new Error("context budget cannot contain the smallest consistent message unit");
      }
      break;
    }
    kept = [...unit, ...kept];
  }
  if (kept.length === 0) throw new Error("context budget cannot be empty");
  return kept;
}
