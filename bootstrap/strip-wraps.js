// How each program format is wrapped for type stripping (shared by the evaluators and the
// out-of-process stripper, stripper.js, so both strip exactly alike). Function-body formats are
// parsed inside an async function so top-level `return` and `await` are legal.

export const FUNCTION_BODY_WRAP = Object.freeze({ prefix: 'async function __ptc_program__() {\n', suffix: '\n}' });

// The TypeScript parser reports a top-level return before vm-script's own analysis sees it.
export const VM_SCRIPT_RETURN_MESSAGE =
  'top-level return is not supported in vm-script programs; end the program with an expression to produce its result';

export const VM_SCRIPT_WRAP = Object.freeze({
  prefix: '',
  suffix: '',
  messages: new Map([['Return statement is not allowed here', VM_SCRIPT_RETURN_MESSAGE]]),
});

export const STRIP_WRAPS = Object.freeze({
  'async-function': FUNCTION_BODY_WRAP,
  'vm-script': VM_SCRIPT_WRAP,
  'scoped-repl': FUNCTION_BODY_WRAP,
  repl: FUNCTION_BODY_WRAP,
});
