// A real `zmarket agent` with real Docker for the apps and orders specs: the Docker check, the
// market server's copy of the local test image, and the agent process itself.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test, expect } from './fixtures.mjs';

export const root = resolve(import.meta.dirname, '../..');
export const bin = process.env.E2E_ZMARKET_BIN || join(root, 'target/release/zmarket');
const images = join(root, 'target/test-images');

function dockerReady() {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Skips the test without a Docker daemon; CI sets ZMARKET_TEST_DOCKER=required, and there a
 * missing daemon fails instead. */
export function needDocker(spec) {
  if (process.env.ZMARKET_TEST_DOCKER === 'required') expect(dockerReady(), 'a Docker daemon').toBe(true);
  test.skip(!dockerReady(), `no Docker daemon reachable: start dockerd to run the ${spec} spec`);
}

/** The market server holds the test image's archive (built locally by scripts/test-images). */
export function serverHoldsTestImage() {
  if (!existsSync(join(images, 'httpd.tar'))) execFileSync(join(root, 'scripts/test-images'), [images], { stdio: 'inherit' });
  execFileSync(bin, ['images', 'add', join(images, 'httpd.tar'), '--data-dir', process.env.E2E_DATA_DIR], { stdio: 'ignore' });
}

/** Starts an agent named `name` against `server`; `printed` resolves to its device id and pairing code. */
export function startAgent(server, stateDir, name) {
  const child = spawn(bin, ['agent', '--server', server, '--name', name, '--state-dir', stateDir, '--heartbeat-secs', '1', '--public-host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ZMARKET_LOG__LEVEL: 'warn' },
  });
  let out = '';
  const printed = new Promise((resolvePrinted, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk.toString();
      const id = out.match(/^device id: (\S+)$/m)?.[1];
      const code = out.match(/^pairing code: (\S+)$/m)?.[1];
      if (id && code) resolvePrinted({ id, code });
    });
    child.stderr.on('data', (c) => (out += c.toString()));
    child.on('exit', (code) => reject(new Error(`agent exited with ${code}:\n${out}`)));
  });
  return { child, printed };
}

/** This spec's containers: those labelled with one of its installations (issue 26: the Docker may
 * be shared, so a spec never counts or removes what it did not install). */
export function containersOf(installationIds) {
  const found = new Set();
  for (const id of installationIds) {
    const out = execFileSync('docker', ['ps', '-aq', '--filter', `label=zmarket.installation=${id}`]).toString();
    for (const c of out.split('\n').filter(Boolean)) found.add(c);
  }
  return [...found];
}

/** Removes this spec's containers (see containersOf), whatever state they are in. A removal the
 * agent began just before it was stopped makes `docker rm -f` fail ("already in progress", or the
 * container gone meanwhile): then look again, for up to 10 s, and fail only if some are still there. */
export function removeContainersOf(installationIds) {
  for (let attempt = 0; ; attempt++) {
    const left = containersOf(installationIds);
    if (!left.length) return;
    try {
      execFileSync('docker', ['rm', '-f', ...left], { stdio: 'ignore' });
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
      execFileSync('sleep', ['0.5']);
    }
  }
}
