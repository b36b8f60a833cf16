// Parses the bootstrap's own argv (after the script path). The host always passes both limits;
// the defaults only serve hand-started runners and match the provider's configuration defaults.

const DEFAULTS = {
  maxMessageBytes: 134217728,
  maxPendingCalls: 128,
};

const FLAGS = {
  '--max-message-bytes': 'maxMessageBytes',
  '--max-pending-calls': 'maxPendingCalls',
};

export function parseOptions(argv) {
  const options = { ...DEFAULTS };
  for (const argument of argv) {
    const eq = argument.indexOf('=');
    const key = FLAGS[eq === -1 ? argument : argument.slice(0, eq)];
    if (key === undefined) throw new Error(`unknown bootstrap argument: ${argument}`);
    const value = Number(argument.slice(eq + 1));
    if (eq === -1 || !Number.isSafeInteger(value) || value < 1) {
      throw new Error(`bootstrap argument needs a positive integer: ${argument}`);
    }
    options[key] = value;
  }
  return options;
}
