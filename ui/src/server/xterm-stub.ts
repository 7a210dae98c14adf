// Stands in for xterm.js and its fit addon in the server bundle: the terminal is created only in
// the browser, when a person opens it (TerminalPanel loads terminalSession.ts in an effect), so the
// server never calls into it; without the stub the IIFE would inline all of xterm.
function unavailable(): never {
  throw new Error('xterm.js is not available during server rendering');
}
export class Terminal {
  constructor() {
    unavailable();
  }
}
export class FitAddon {
  constructor() {
    unavailable();
  }
}
