// GPUs as they are (issue 38), fed by a fake agent that speaks the agent protocol from here: a box
// with two NVIDIA H200s (UUID, driver, CUDA, compute capability) beats with their telemetry
// (97 % busy, 39 GB used, 61 °C, 540 W) and answers the market's commands (gpu_verify with its
// figures, app_install by reporting the app running). Then, in English and Chinese:
// - the owner's device page lists both GPUs with UUID, driver and CUDA, their utilization chart
//   says 97 %, Verify GPUs measures ("Measuring…", then the figures), and a failed verification is
//   said in words;
// - a renter of a GPU app sees "Your GPU: 97 % busy, 36 of 140 GB" with its charts, and the AI
//   compute page shows the held GPU's use;
// - the metrics call answers the renter only the GPU their installation holds.
// Sizes are in the product's steps of 1024 (docs/product.md §9): 39e9 bytes are 36 GB, an H200's
// 150754820096 bytes 140 GB.
import { randomUUID } from 'node:crypto';
import { test, expect, verifiedAccount, apiSession, signIn } from './fixtures.mjs';

const GIB = 2 ** 30;
const H200 = 150754820096;
const UUIDS = [`GPU-${randomUUID()}`, `GPU-${randomUUID()}`];
const gpu = (index) => ({
  index,
  uuid: UUIDS[index],
  name: 'NVIDIA H200',
  vram: H200,
  passthrough: true,
  driver: '580.159.04',
  cuda: '13.0',
  compute_capability: '9.0',
  mig: false,
});
const SPEC = { cpu_cores: 32, memory_bytes: 256 * GIB, disk_bytes: 2048 * GIB, gpu_runtime: true, gpus: [gpu(0), gpu(1)] };
const TELEMETRY = UUIDS.map((uuid) => ({ uuid, utilization: 97, memory_used: 39e9, temperature: 61, power_watts: 540 }));
const METRICS = { cpu_percent: 35, memory_used_bytes: 64 * GIB, disk_used_bytes: 300 * GIB, gpus: TELEMETRY };

async function ok(res) {
  const body = await res.json();
  expect(res.status(), JSON.stringify(body)).toBe(200);
  return body.data;
}

/**
 * A box that speaks the agent protocol from here (it runs nothing). Every beat carries the spec,
 * the telemetry, the installations it runs and its answers to the commands of the beat before: an
 * `app_install` is acked and its installation reported running from then on; a `gpu_verify` is
 * acked with the figures of `verdict` (per GPU: ok, or a reason).
 */
function fakeBox(request, secret) {
  const box = {
    acks: [],
    verification: null,
    running: [],
    installs: [],
    verifications: 0,
    verdict: [{ ok: true }, { ok: true }],
    async beat() {
      const body = { spec: SPEC, metrics: METRICS, installations: box.running.map((id) => ({ id, status: 'running' })), acks: box.acks };
      if (box.verification) body.verification = box.verification;
      const sent = !!box.verification;
      const data = await ok(await request.post('/api/agent/v1/heartbeat', { headers: { authorization: `Bearer ${secret}` }, data: body }));
      box.acks = [];
      box.verification = null;
      if (sent) box.verifications++;
      for (const cmd of data.commands) {
        box.acks.push({ id: cmd.id, ok: true });
        if (cmd.kind === 'app_install') {
          box.installs.push(cmd);
          box.running.push(cmd.payload.installation_id);
        }
        if (cmd.kind === 'gpu_verify') {
          box.verification = {
            gpus: UUIDS.map((uuid, i) =>
              box.verdict[i].ok
                ? { uuid, ok: true, d2d_gbps: 3912.4, h2d_gbps: 52.1, reason: null }
                : { uuid, ok: false, d2d_gbps: 410.2, h2d_gbps: 51.7, reason: box.verdict[i].reason },
            ),
          };
        }
      }
      return data.commands;
    },
    /** Beats until the market's next gpu_verify has been answered. */
    async answerVerify() {
      const before = box.verifications;
      await expect.poll(async () => (await box.beat(), box.verifications), { timeout: 20_000, intervals: [500] }).toBeGreaterThan(before);
    },
  };
  return box;
}

let owner;
let ownerAuth;
let deviceId;
let box;

test.describe.configure({ mode: 'serial' });

// The fake box beats from every test, so it has a request context of its own (a test's
// `request` fixture may not outlive its test).
let agentApi;

test.beforeAll(async ({ playwright, baseURL }) => {
  agentApi = await playwright.request.newContext({ baseURL });
  const request = agentApi;
  owner = `gpus-owner-${Date.now()}@example.com`;
  await verifiedAccount(request, owner);
  ownerAuth = await apiSession(request, owner);
  const reg = await ok(await request.post('/api/agent/v1/register', { data: { type: 'Z-BOX', name: 'H200 box', spec: SPEC } }));
  deviceId = reg.device_id;
  box = fakeBox(request, reg.device_secret);
  await box.beat();
  await ok(await request.post('/api/ebs/v2/devices/link', { headers: ownerAuth, data: { device_id: deviceId, pairing_code: reg.pairing_code } }));
  await ok(await request.put(`/api/ebs/v2/devices/${deviceId}/sharing`, { headers: ownerAuth, data: { mode: 'manual', rentable: true, price_per_hour: 100 } }));
  // About five beats of telemetry (and the answer to a verification the bind may have asked for).
  for (let i = 0; i < 5; i++) await box.beat();
});

test.afterAll(async () => {
  await agentApi?.dispose();
});

test.beforeEach(async () => {
  // The box keeps reporting (it would be offline after 90 s of silence).
  await box.beat();
});

test('en: the owner sees both GPUs by UUID with driver, CUDA, live use, and verifies them', async ({ page, consoleErrors }) => {
  const device = await ok(await page.request.get(`/api/ebs/v2/devices/${deviceId}`, { headers: ownerAuth }));
  expect(device.spec.gpus.map((g) => g.uuid)).toEqual(UUIDS);
  expect(device.gpus_free).toBe(2);

  await signIn(page, owner, { redirect: `/devices/details?id=${deviceId}`, fresh: true });
  await page.goto(`/devices/details?id=${deviceId}&language=en`);
  const cards = page.locator('.gpu-card');
  await expect(cards).toHaveCount(2);
  await expect(page.getByTestId('gpus-free')).toHaveText('2 of 2 free');
  for (const [i, uuid] of UUIDS.entries()) {
    const card = page.locator(`.gpu-card[data-gpu="${uuid}"]`);
    await expect(card.locator('h3')).toHaveText(`GPU ${i} · NVIDIA H200`);
    await expect(card.getByTestId('gpu-uuid')).toHaveText(uuid);
    await expect(card.getByTestId('gpu-driver')).toHaveText('580.159.04');
    await expect(card.getByTestId('gpu-cuda')).toHaveText('13.0');
    await expect(card).toContainText('Compute capability');
    await expect(card).toContainText('9.0');
    await expect(card).toContainText('140.40 GB');
    const utilization = card.locator('.line-chart', { hasText: 'Utilization' });
    await expect(utilization.locator('.line-chart-latest')).toHaveText('97 %');
    await expect(utilization.getByRole('img')).toHaveAttribute('aria-label', 'Utilization, last 60 minutes: now 97 %');
    await expect(card.locator('.line-chart', { hasText: 'Memory used' }).locator('.line-chart-latest')).toHaveText('36 of 140 GB');
    await expect(card.getByTestId('gpu-temperature')).toHaveText('Temperature 61 °C');
    await expect(card.getByTestId('gpu-power')).toHaveText('Power 540 W');
  }
  // The box's own CPU and memory over the hour.
  await expect(page.locator('.device-metrics .line-chart', { hasText: 'CPU usage' }).locator('.line-chart-latest')).toHaveText('35 %');

  // Verify GPUs: Measuring… until the box has answered, then each GPU's figures.
  await page.getByRole('button', { name: 'Verify GPUs' }).click();
  await expect(page.getByRole('button', { name: 'Measuring…' })).toBeDisabled();
  await box.answerVerify();
  await expect(page.getByText('GPU verification finished')).toBeVisible({ timeout: 15_000 });
  await expect(page.getByRole('button', { name: 'Verify GPUs' })).toBeEnabled();
  for (const uuid of UUIDS) {
    const card = page.locator(`.gpu-card[data-gpu="${uuid}"]`);
    await expect(card.locator('[data-verified]')).toHaveText('Verified');
    await expect(card.locator('.gpu-verification')).toContainText('3,912.4 GB/s on the card, 52.1 GB/s from the host');
  }
  await expect(page.getByTestId('gpu-not-offered')).toHaveCount(0);
  await page.screenshot({ path: 'test-results/gpus-device-en.png', fullPage: true });
  expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
});

test('en, zh: the renter of a GPU app sees their GPU busy, on the installation and AI compute pages', async ({ page, request, consoleErrors }) => {
  test.setTimeout(90_000);
  const renter = `gpus-renter-${Date.now()}@example.com`;
  await verifiedAccount(request, renter);
  const renterAuth = await apiSession(request, renter);
  // Ollama needs one GPU; the box offers it at 1 coin an hour.
  const inst = await ok(await request.post('/api/rmp/v1/apps/rent', { headers: renterAuth, data: { app_id: 'ollama', device_id: deviceId, hours: 1, price_per_hour: 100 } }));
  await expect.poll(async () => (await box.beat(), box.running.includes(inst.id)), { timeout: 20_000, intervals: [500] }).toBe(true);
  await box.beat();
  await expect
    .poll(async () => (await ok(await request.get(`/api/rmp/v1/apps/${inst.id}`, { headers: renterAuth }))).status, { timeout: 20_000 })
    .toBe('running');
  // The install command gave the container exactly one of the box's GPUs, the one the installation holds.
  const cmd = box.installs.find((c) => c.payload.installation_id === inst.id);
  expect(cmd.payload.gpus).toHaveLength(1);
  const held = cmd.payload.gpus[0];
  expect(UUIDS).toContain(held);
  const details = await ok(await request.get(`/api/rmp/v1/apps/${inst.id}`, { headers: renterAuth }));
  expect(details.gpus).toEqual([{ uuid: held, name: 'NVIDIA H200', vram: H200 }]);
  // The renter's metrics: only that GPU, no CPU or memory of the owner's box; a stranger's: none.
  const mine = await ok(await request.get(`/api/ebs/v2/devices/${deviceId}/metrics?minutes=60`, { headers: renterAuth }));
  expect(mine.gpus.map((g) => g.uuid)).toEqual([held]);
  expect(mine.cpu).toEqual([]);
  const stranger = `gpus-stranger-${Date.now()}@example.com`;
  await verifiedAccount(request, stranger);
  const refused = await request.get(`/api/ebs/v2/devices/${deviceId}/metrics`, { headers: await apiSession(request, stranger) });
  expect(refused.status()).toBe(404);

  await signIn(page, renter, { redirect: `/app/details?id=${inst.id}`, fresh: true });
  await page.goto(`/app/details?id=${inst.id}&language=en`);
  const yours = page.locator('.your-gpu');
  await expect(yours.getByTestId('your-gpu-text')).toHaveText('Your GPU: 97 % busy, 36 of 140 GB');
  await expect(yours.locator('.line-chart', { hasText: 'Utilization' }).locator('.line-chart-latest')).toHaveText('97 %');
  await expect(yours.locator('.line-chart', { hasText: 'Memory used' }).locator('.line-chart-latest')).toHaveText('36 of 140 GB');
  await expect(yours).toContainText(held);
  await page.screenshot({ path: 'test-results/gpus-rental-en.png', fullPage: true });

  await page.goto(`/app/details?id=${inst.id}&language=zh`);
  await expect(page.locator('.your-gpu').getByTestId('your-gpu-text')).toHaveText('你的 GPU：97% 忙碌，已用 36 / 140 GB');
  await expect(page.locator('.your-gpu .line-chart', { hasText: '利用率' }).locator('.line-chart-latest')).toHaveText('97 %');
  await page.screenshot({ path: 'test-results/gpus-rental-zh.png', fullPage: true });

  // AI compute: the held GPU with its latest use.
  await page.goto('/app/aicompute?language=en');
  const row = page.locator(`tr[data-installation="${inst.id}"]`);
  await expect(row.getByTestId('gpu-live')).toContainText('97 % · 36 / 140 GB');
  await page.screenshot({ path: 'test-results/gpus-aicompute-en.png', fullPage: true });

  // The owner's page counts it held.
  const device = await ok(await request.get(`/api/ebs/v2/devices/${deviceId}`, { headers: ownerAuth }));
  expect(device.gpus_free).toBe(1);
  expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
});

test('zh, en: the device page in Chinese; a GPU that fails its verification is said in words', async ({ page, consoleErrors }) => {
  await signIn(page, owner, { redirect: `/devices/details?id=${deviceId}`, fresh: true });
  await page.goto(`/devices/details?id=${deviceId}&language=zh`);
  const second = page.locator(`.gpu-card[data-gpu="${UUIDS[1]}"]`);
  await expect(page.locator('.gpu-card')).toHaveCount(2);
  await expect(second.getByTestId('gpu-uuid')).toHaveText(UUIDS[1]);
  await expect(second).toContainText('驱动');
  await expect(second).toContainText('计算能力');
  await expect(second.getByTestId('gpu-driver')).toHaveText('580.159.04');
  await expect(second.getByTestId('gpu-cuda')).toHaveText('13.0');
  await expect(second.locator('.line-chart', { hasText: '利用率' }).locator('.line-chart-latest')).toHaveText('97 %');
  await expect(second.locator('.line-chart', { hasText: '已用显存' }).locator('.line-chart-latest')).toHaveText('已用 36 / 140 GB');
  await expect(second.locator('.line-chart', { hasText: '利用率' }).getByRole('img')).toHaveAttribute('aria-label', '利用率，最近 60 分钟：当前 97 %');

  // The second GPU copies far too slowly this time.
  box.verdict = [{ ok: true }, { ok: false, reason: 'slow_memory' }];
  await page.getByRole('button', { name: '验证 GPU' }).click();
  await expect(page.getByRole('button', { name: '正在测量…' })).toBeVisible();
  await box.answerVerify();
  await expect(second.locator('[data-verified]')).toHaveText('验证未通过', { timeout: 15_000 });
  await expect(second.locator('.gpu-verification')).toContainText('验证未通过：显存复制速度远低于该型号应有的水平');
  await expect(page.getByTestId('gpu-not-offered')).toHaveText('这台设备有 GPU 未通过验证：通过之前，它不会被用于 GPU 应用。');
  await expect(page.locator(`.gpu-card[data-gpu="${UUIDS[0]}"] [data-verified]`)).toHaveText('已验证');
  await page.screenshot({ path: 'test-results/gpus-device-zh.png', fullPage: true });

  await page.goto(`/devices/details?id=${deviceId}&language=en`);
  await expect(page.locator(`.gpu-card[data-gpu="${UUIDS[1]}"] .gpu-verification`)).toContainText(
    'Failed verification', // then the date
  );
  await expect(page.locator(`.gpu-card[data-gpu="${UUIDS[1]}"] .gpu-verification`)).toContainText('its memory copies far slower than this model should');
  await expect(page.getByTestId('gpu-not-offered')).toBeVisible();
  await page.screenshot({ path: 'test-results/gpus-device-failed-en.png', fullPage: true });
  expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
});
