// Reading a list of AG-UI events in the suites that drive AG-UI agents.

/** @param {Array<{type: string}>} events their types, in order */
export const types = (events) => events.map((e) => e.type);

/** @param {Array<any>} events the text their TEXT_MESSAGE_CONTENT deltas make */
export const textOf = (events) =>
  events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
    .map((e) => e.delta)
    .join('');
