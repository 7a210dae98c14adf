// Friends, tags and messages between two people in two browser windows (two contexts), delivered
// live over the event stream: A asks B by email, B accepts without reloading, A gives B an alias
// and a tag, they message each other and the messages appear on the other side as they are sent;
// B's unread badge counts and clears. Then B's network is cut: what A sends meanwhile appears
// once B is back online (the stream resumes with Last-Event-ID). In English and in Chinese.
import { test, expect, apiSession, verifiedAccount, signIn } from './fixtures.mjs';

const T = {
  en: {
    email: 'Email', friends: 'Friends', messages: 'Messages', tags: 'Tags',
    addFriend: 'Add a friend', sendRequest: 'Send request', requestSent: 'Friend request sent', waiting: 'Waiting for an answer',
    wants: 'wants to be your friend', accept: 'Accept', myFriends: 'My friends', edit: 'Edit', alias: 'Alias',
    newTag: 'New tag', save: 'Save', filter: 'Filter by tag', message: 'Message', send: 'Send', conversations: 'Conversations',
    notifications: 'Notifications', viewAll: 'View all', noNotifications: 'No notifications yet', read: 'Read',
    aliasInvalid: 'Alias Format Invalid', manageTags: 'Manage tags', myTags: 'My tags',
    aliasValue: 'Bobby Tables', tagValue: 'Work', hello: 'Hello B, are you there?', again: 'Lunch at noon?',
    reply: 'Hi A! Yes.', offline: 'Sent while you were offline',
  },
  zh: {
    email: '邮箱', friends: '好友', messages: '消息', tags: '标签',
    addFriend: '添加好友', sendRequest: '发送请求', requestSent: '好友请求已发送', waiting: '等待对方回应',
    wants: '想添加你为好友', accept: '接受', myFriends: '我的好友', edit: '编辑', alias: '备注名',
    newTag: '新标签', save: '保存', filter: '按标签筛选', message: '发消息', send: '发送', conversations: '会话',
    notifications: '通知', viewAll: '查看全部', noNotifications: '还没有通知', read: '已读',
    aliasInvalid: '备注名格式不正确', manageTags: '管理标签', myTags: '我的标签',
    aliasValue: '小明同学', tagValue: '同事', hello: '你好，在吗？', again: '中午一起吃饭？',
    reply: '在的！', offline: '你离线时发的消息',
  },
};

/** Signs in and waits for the console's menu. */
async function signInToConsole(page, lang, email) {
  await signIn(page, email, { lang });
  await expect(page.locator('nav.side-menu .menu-item').first()).toBeVisible();
}

const menuItem = (page, label) => page.locator('nav.side-menu .menu-item', { hasText: label }).first();

/** Waits until this tab's event stream is open (the UI marks it on the document for tests). */
const streamLive = (page) => expect(page.locator('html')).toHaveAttribute('data-live', 'live', { timeout: 15_000 });

for (const lang of ['en', 'zh']) {
  test(`friends, tags and live messages between two windows (${lang})`, async ({ page, browser, request, consoleErrors }) => {
    test.setTimeout(120_000);
    const t = T[lang];
    const stamp = Date.now();
    const a = `alice-${lang}-${stamp}@example.com`;
    const b = `bob-${lang}-${stamp}@example.com`;
    await verifiedAccount(request, a);
    await verifiedAccount(request, b);

    const other = await browser.newContext();
    const pageB = await other.newPage();
    const errorsB = [];
    pageB.on('console', (msg) => msg.type() === 'error' && errorsB.push(msg.text()));
    pageB.on('pageerror', (err) => errorsB.push(String(err)));

    try {
      await signInToConsole(page, lang, a);
      await signInToConsole(pageB, lang, b);

      // Both on the friends page, each with its stream open.
      await menuItem(page, t.friends).click();
      await expect(page.getByRole('heading', { name: t.friends, level: 1 })).toBeVisible();
      await menuItem(pageB, t.friends).click();
      await expect(pageB.getByRole('heading', { name: t.friends, level: 1 })).toBeVisible();
      await streamLive(page);
      await streamLive(pageB);

      // A asks B by email.
      const add = page.locator('form', { has: page.getByRole('heading', { name: t.addFriend }) });
      await add.getByLabel(t.email, { exact: true }).fill(b);
      await add.getByRole('button', { name: t.sendRequest }).click();
      await expect(page.getByText(t.requestSent).first()).toBeVisible();
      await expect(page.locator('li.list-row', { hasText: b })).toContainText(t.waiting);

      // B sees it in the other window without reloading (the request and the menu badge), and accepts.
      const incoming = pageB.locator('li.list-row', { hasText: a });
      await expect(incoming).toContainText(t.wants);
      await expect(menuItem(pageB, t.friends).locator('.badge')).toHaveText('1');
      await pageB.screenshot({ path: `test-results/social-request-${lang}.png`, fullPage: true });
      await incoming.getByRole('button', { name: t.accept }).click();
      await expect(menuItem(pageB, t.friends).locator('.badge')).toHaveCount(0);
      await expect(pageB.locator('tr', { hasText: a })).toBeVisible();

      // A's window shows B as a friend (live), the request gone.
      const rowB = page.locator('tr', { hasText: b });
      await expect(rowB).toBeVisible();
      await expect(page.locator('li.list-row', { hasText: b })).toHaveCount(0);

      // A gives B an alias and a new tag; a too-short alias is refused first.
      await rowB.getByRole('button', { name: new RegExp(`^${t.edit} `) }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel(t.alias).fill('ab');
      await dialog.getByRole('button', { name: t.save }).click();
      await expect(dialog.getByText(t.aliasInvalid)).toBeVisible();
      await dialog.getByLabel(t.alias).fill(t.aliasValue);
      await dialog.getByLabel(t.newTag).fill(t.tagValue);
      await dialog.getByRole('button', { name: t.save }).click();
      await expect(dialog).toHaveCount(0);
      const aliased = page.locator('tr', { hasText: t.aliasValue });
      await expect(aliased).toContainText(b);
      await expect(aliased.locator('.chip')).toHaveText(t.tagValue);

      // Filtering by the tag keeps B; the tags page counts one friend under it.
      await page.getByLabel(t.filter).selectOption(t.tagValue);
      await expect(page).toHaveURL(/[?&]tag=/);
      await expect(page.locator('tbody tr')).toHaveCount(1);
      await page.screenshot({ path: `test-results/social-friends-${lang}.png`, fullPage: true });
      await page.getByRole('link', { name: t.manageTags }).click();
      await expect(page.getByRole('heading', { name: t.myTags })).toBeVisible();
      await expect(page.locator('tr', { hasText: t.tagValue })).toContainText('1');
      await page.screenshot({ path: `test-results/social-tags-${lang}.png`, fullPage: true });

      // A opens the conversation from the friends list and writes twice: B's unread badge counts.
      await page.goBack();
      await page.locator('tr', { hasText: t.aliasValue }).getByRole('link', { name: t.message, exact: true }).click();
      await expect(page).toHaveURL(/\/messages\?with=/);
      await expect(page.getByRole('heading', { name: t.aliasValue, level: 2 })).toBeVisible();
      const composerA = page.locator('form.composer');
      await composerA.getByRole('textbox').fill(t.hello);
      await composerA.getByRole('button', { name: t.send }).click();
      await expect(page.locator('.bubble.mine', { hasText: t.hello })).toBeVisible();
      const unreadB = menuItem(pageB, t.messages).locator('.badge');
      await expect(unreadB).toHaveText('1');
      await composerA.getByRole('textbox').fill(t.again);
      await composerA.getByRole('textbox').press('Enter');
      await expect(page.locator('.bubble.mine', { hasText: t.again })).toBeVisible();
      await expect(unreadB).toHaveText('2');
      await pageB.screenshot({ path: `test-results/social-unread-${lang}.png`, fullPage: true });

      // B opens Messages: the conversation shows 2 unread; opening it reads them and the badge clears.
      await menuItem(pageB, t.messages).click();
      await expect(pageB.getByRole('heading', { name: t.conversations, exact: true })).toBeVisible();
      const conv = pageB.locator('a.conversation').first();
      await expect(conv).toContainText(t.again);
      await expect(conv.locator('.badge')).toHaveText('2');
      await conv.click();
      await expect(pageB.locator('.bubble.theirs', { hasText: t.hello })).toBeVisible();
      await expect(pageB.locator('.bubble.theirs', { hasText: t.again })).toBeVisible();
      await expect(unreadB).toHaveCount(0);
      await expect(conv.locator('.badge')).toHaveCount(0);
      // A sees that B read them.
      await expect(page.locator('.bubble.mine', { hasText: t.again })).toContainText(t.read);

      // Live both ways.
      const composerB = pageB.locator('form.composer');
      await composerB.getByRole('textbox').fill(t.reply);
      await composerB.getByRole('button', { name: t.send }).click();
      await expect(page.locator('.bubble.theirs', { hasText: t.reply })).toBeVisible();
      await expect(menuItem(page, t.messages).locator('.badge')).toHaveCount(0); // A has it open
      await page.screenshot({ path: `test-results/social-thread-a-${lang}.png`, fullPage: true });

      // B's network is cut; A writes; back online, B's open conversation shows it.
      await other.setOffline(true);
      await expect(pageB.locator('html')).not.toHaveAttribute('data-live', 'live');
      await composerA.getByRole('textbox').fill(t.offline);
      await composerA.getByRole('button', { name: t.send }).click();
      await expect(page.locator('.bubble.mine', { hasText: t.offline })).toBeVisible();
      await expect(pageB.locator('.bubble', { hasText: t.offline })).toHaveCount(0);
      await other.setOffline(false);
      await expect(pageB.locator('.bubble.theirs', { hasText: t.offline })).toBeVisible({ timeout: 20_000 });
      await streamLive(pageB);
      await pageB.screenshot({ path: `test-results/social-thread-b-${lang}.png`, fullPage: true });

      // The bell's "View all" lands on the notifications list, in the reader's language.
      await pageB.getByRole('button', { name: t.notifications }).click();
      await pageB.getByRole('link', { name: t.viewAll }).click();
      await expect(pageB).toHaveURL(/\/messages\?tab=notifications/);
      await expect(pageB.getByRole('heading', { name: t.notifications, level: 2 })).toBeVisible();
      await expect(pageB.getByText(t.noNotifications)).toBeVisible();

      expect(consoleErrors).toEqual([]);
      // A cut network makes the browser log the failed stream request; nothing else may be logged.
      expect(errorsB.filter((e) => !/ERR_INTERNET_DISCONNECTED|Failed to fetch|network/i.test(e))).toEqual([]);
    } finally {
      await other.close();
    }
  });
}

test('without the event stream the tab polls: counts and messages still arrive', async ({ page, request, consoleErrors }) => {
  const t = T.en;
  const stamp = Date.now();
  const a = `poll-a-${stamp}@example.com`;
  const b = `poll-b-${stamp}@example.com`;
  await verifiedAccount(request, a);
  await verifiedAccount(request, b);
  const headersA = await apiSession(request, a);
  const headersB = await apiSession(request, b);
  const req = await request.post('/api/cim/v1/friends/requests', { headers: headersA, data: { email: b } });
  const accepted = await request.post(`/api/cim/v1/friends/requests/${(await req.json()).data.id}/accept`, { headers: headersB });
  expect(accepted.status()).toBe(200);
  const idA = (await (await request.get('/api/iam/v1/account/profile', { headers: headersA })).json()).data.id;

  // The stream is refused (as a proxy that does not pass it would): the tab falls back to polling.
  let refused = 0;
  await page.route('**/api/cim/v1/events', (route) => {
    refused += 1;
    return route.fulfill({ status: 503, body: 'unavailable' });
  });
  await signInToConsole(page, 'en', b);
  await expect(page.locator('html')).toHaveAttribute('data-live', 'polling', { timeout: 15_000 });

  // A message from A shows in the menu badge at the next poll, then in the open conversation.
  const idB = (await (await request.get('/api/iam/v1/account/profile', { headers: headersB })).json()).data.id;
  const first = await request.post('/api/cim/v1/messages', { headers: headersA, data: { to_user_id: idB, body: 'Polled hello' } });
  expect(first.status()).toBe(200);
  await expect(menuItem(page, t.messages).locator('.badge')).toHaveText('1', { timeout: 25_000 });
  await page.goto(`/messages?with=${idA}`);
  await expect(page.locator('.bubble.theirs', { hasText: 'Polled hello' })).toBeVisible();
  await expect(menuItem(page, t.messages).locator('.badge')).toHaveCount(0, { timeout: 25_000 });
  const second = await request.post('/api/cim/v1/messages', { headers: headersA, data: { to_user_id: idB, body: 'Polled again' } });
  expect(second.status()).toBe(200);
  await expect(page.locator('.bubble.theirs', { hasText: 'Polled again' })).toBeVisible({ timeout: 25_000 });

  // History pages backwards: 30 more messages, then only the newest page shows until asked.
  for (let i = 1; i <= 30; i++) {
    const r = await request.post('/api/cim/v1/messages', { headers: headersA, data: { to_user_id: idB, body: `Number ${i}` } });
    expect(r.status()).toBe(200);
  }
  await page.reload();
  await expect(page.locator('.bubble', { hasText: 'Number 30' })).toBeVisible();
  await expect(page.locator('.bubble')).toHaveCount(30);
  await expect(page.locator('.bubble', { hasText: 'Polled hello' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Earlier messages' }).click();
  await expect(page.locator('.bubble', { hasText: 'Polled hello' })).toBeVisible();
  await expect(page.locator('.bubble')).toHaveCount(32);
  await expect(page.getByRole('button', { name: 'Earlier messages' })).toHaveCount(0);
  expect(refused).toBeGreaterThan(0);
  // The refused stream requests are logged by the browser; nothing else may be.
  expect(consoleErrors.filter((e) => !/503|Service Unavailable/i.test(e))).toEqual([]);
});

test("the bell's View all lists the person's notifications, live and in the reader's language", async ({ page, request, consoleErrors }) => {
  const t = T.en;
  const email = `notified-${Date.now()}@example.com`;
  await verifiedAccount(request, email);
  const headers = await apiSession(request, email);
  await signInToConsole(page, 'en', email);
  await page.getByRole('button', { name: t.notifications }).click();
  await page.getByRole('link', { name: t.viewAll }).click();
  await expect(page).toHaveURL(/\/messages\?tab=notifications/);
  await expect(page.getByText(t.noNotifications)).toBeVisible();
  await streamLive(page);

  // A box is registered (online) and bound to the person; it stays silent, so the server marks it
  // offline (this spec's server runs with a 6 s offline limit, like the devices spec), then its
  // heartbeat brings it back: both notifications reach the open list and the bell without a reload.
  const spec = { cpu_cores: 4, memory_bytes: 8 * 2 ** 30, disk_bytes: 256 * 2 ** 30, gpus: [] };
  const reg = await request.post('/api/agent/v1/register', { data: { type: 'Z-BOX', name: 'Desk box', spec } });
  const { device_id, device_secret, pairing_code } = (await reg.json()).data;
  const link = await request.post('/api/ebs/v2/devices/link', { headers, data: { device_id, pairing_code } });
  expect(link.status(), await link.text()).toBe(200);
  const items = page.locator('li[data-notification]');
  await expect(items.first()).toContainText('Device offline', { timeout: 30_000 });
  await expect(page.getByRole('button', { name: t.notifications }).locator('.badge')).toHaveText('1');
  const hb = await request.post('/api/agent/v1/heartbeat', {
    headers: { authorization: `Bearer ${device_secret}` },
    data: { spec, metrics: { cpu_percent: 5, memory_used_bytes: 2 ** 30, disk_used_bytes: 2 ** 33 }, acks: [] },
  });
  expect(hb.status()).toBe(200);
  await expect(items).toHaveCount(2);
  const item = items.first();
  await expect(item).toContainText('Device online');
  await expect(item).toContainText(`Desk box (${device_id}) is online.`);
  await expect(page.getByRole('button', { name: t.notifications }).locator('.badge')).toHaveText('2');

  // In Chinese the same notification reads in Chinese.
  await page.getByRole('group', { name: 'Language' }).getByRole('button', { name: '中文' }).click();
  await expect(item).toContainText('设备上线');
  await expect(item).toContainText(`Desk box（${device_id}）已上线。`);
  await page.screenshot({ path: 'test-results/social-notifications-zh.png', fullPage: true });

  // Marking one read counts the bell down.
  await item.getByRole('button', { name: '标为已读' }).click();
  await expect(item).toContainText('已读');
  await expect(page.getByRole('button', { name: '通知' }).locator('.badge')).toHaveText('1');
  expect(consoleErrors).toEqual([]);
});
