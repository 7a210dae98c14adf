// Test-only inputs for render checks (never shipped): a state like the binary's and sample API shapes.
export const app = {
  id: 'app-1',
  name: 'Stable Diffusion WebUI',
  summary: 'Text to image on your GPU',
  description: 'Generate images from text prompts.',
  icon_url: '',
  category: 'AI',
  display_type: 'Lite App',
  tier: 'high',
  price_per_hour: { from: 1250, offers: 1 },
  publisher: 'Example Labs',
  version: '1.2.0',
  requirements: { cpu_cores: 8, memory_bytes: 17179869184, disk_bytes: 549755813888, gpu_count: 1 },
};

/** The details answer: the app with its offers. */
export const appDetails = {
  ...app,
  offers: [{ device_id: 'dev-1', device_name: 'Box in Shenzhen', gpus: ['RTX 4090'], price_per_hour: 1250 }],
};

export const device = {
  id: 'dev-1',
  name: 'Box in Shenzhen',
  type: 'Z-BOX',
  status: 'online',
  distance_km: 3.2,
  lat: 22.55,
  lng: 114.07,
  price_per_hour: 300,
  gpus: [{ name: 'RTX 4090', passthrough: true, vram: 25769803776 }],
  apps: [app],
};

/** A box with its GPUs as they are (issue 38): one read through NVML, one from an older agent. */
export const gpuDevice = {
  ...device,
  id: 'dev-2',
  name: 'H200 box',
  gpus: [
    { index: 0, uuid: 'GPU-5c9a1e2b-7f3d-4a6e-9b8c-0d1e2f3a4b5c', name: 'NVIDIA H200', vram: 150754820096, passthrough: true, driver: '580.159.04', cuda: '13.0', compute_capability: '9.0', mig: false },
    { name: 'NVIDIA H200', passthrough: true, vram: 150754820096 },
  ],
  gpus_free: 1,
  verified: true,
};

export function state(overrides = {}) {
  return {
    lang: 'en',
    theme: 'dark',
    productName: 'ZMarket',
    isMobile: false,
    url: '/market',
    config: {
      downloadLinks: { windows: '/dl/win.exe', mac: '', android: '', ios: '' },
      map: { tileUrl: '', center: { lat: 22.54, lng: 114.06 }, zoom: 3 },
    },
    data: {},
    ...overrides,
  };
}

/** [url, state overrides, expected status, expected title, text the markup must contain] */
export const renderCases = [
  ['/market', {}, 200, 'Explore Market - ZMarket', 'skeleton-card'],
  ['/market', { data: { market: { items: [], total: 0 } } }, 200, 'Explore Market - ZMarket', 'No apps here yet'],
  ['/market', { data: { market: { items: [app], total: 1 }, marketTopPicks: { items: [app], total: 1 } } }, 200, 'Explore Market - ZMarket', 'top-picks'],
  // A top pick the list also holds comes as its id (src/market/ssr.rs), and renders as a card.
  ['/market', { data: { market: { items: [app], total: 1 }, marketTopPicks: { items: ['app-1'], total: 1 } } }, 200, 'Explore Market - ZMarket', '<ul class="card-grid compact" role="list"><li class="card app-card">'],
  ['/market?category=AI', { data: { market: { items: [app], total: 1 } } }, 200, 'Explore Market - ZMarket', 'Stable Diffusion WebUI'],
  ['/market', { lang: 'zh', data: { market: { items: [], total: 0 } } }, 200, '探索市场 - ZMarket', '暂无应用'],
  ['/market/more?keyword=sd', { data: { marketMore: { items: [app], total: 30 } } }, 200, 'More Apps - ZMarket', 'Load more'],
  ['/market/details?id=app-1', { data: { marketDetails: appDetails } }, 200, 'App Details - ZMarket', '8 Cores CPU, 16 GB Memory, 512 GB SSD Disk, GPU*1'],
  ['/market/details?id=nope', { data: { notFound: true } }, 404, 'Page Not Found - ZMarket', 'Sorry, the page you visited does not exist'],
  ['/m/market/details?id=nope', { isMobile: true, lang: 'zh', data: { notFound: true } }, 404, '页面不存在 - ZMarket', 'tab-bar'],
  ['/nearby', { data: { nearby: { items: [device], total: 1 } } }, 200, 'Nearby - ZMarket', '4 km'],
  ['/nearby/details?id=dev-1', { data: { nearbyDetails: device } }, 200, 'Device Details - ZMarket', 'RTX 4090'],
  ['/nearby/details?id=dev-2', { lang: 'zh', data: { nearbyDetails: gpuDevice } }, 200, '设备详情 - ZMarket', '<td>580.159.04</td><td>13.0</td><td>9.0</td><td>关闭</td>'],
  ['/nearby/map', { theme: 'light' }, 200, 'Nearby Map - ZMarket', 'Loading map'],
  ['/on-demand', {}, 200, 'On Demand - ZMarket', 'Place an Order'],
  ['/on-demand/place-an-order', {}, 200, 'Place an Order - ZMarket', 'GPU'],
  ['/auth/signin', {}, 200, 'Sign In - ZMarket', 'Sign in to ZMarket'],
  ['/auth/signup', {}, 200, 'Sign Up - ZMarket', 'Terms of Use'],
  ['/auth/signup', { lang: 'zh' }, 200, '注册 - ZMarket', '用户协议'],
  ['/check-email?email=a%40b.co', {}, 200, 'Check Your Email - ZMarket', 'a@b.co'],
  ['/email-verified?token=t', {}, 200, 'Email Verified - ZMarket', 'Verifying your email'],
  ['/company-email', {}, 200, 'Company Email - ZMarket', 'slim-header'],
  ['/iam/v1/sme/join?code=c', {}, 200, 'Join Company - ZMarket', 'slim-header'],
  ['/m/download', {}, 200, 'Download - ZMarket', '/dl/win.exe'],
  ['/403', {}, 200, 'No Access - ZMarket', 'Sorry, you do not have access to this page'],
  ['/404', {}, 200, 'Page Not Found - ZMarket', 'Sorry, the page you visited does not exist'],
  ['/500', {}, 200, 'Network Error - ZMarket', 'Sorry, your network is missing'],
  ['/500', { lang: 'zh' }, 200, '网络错误 - ZMarket', '抱歉，您的网络不见了'],
  ['/pc-web?redirect=%2Fmarket&token=x', {}, 200, 'Loading - ZMarket', 'Loading'],
  ['/m/market', { isMobile: true }, 200, 'Explore Market - ZMarket', 'tab-bar'],
  ['/m/market/more', { isMobile: true }, 200, 'More Apps - ZMarket', 'tab-bar'],
  ['/m/market/details?id=app-1', { isMobile: true, data: { marketDetails: appDetails } }, 200, 'App Details - ZMarket', 'from 12.50 coins/h · 1 offer'],
  ['/m/nearby', { isMobile: true, data: { nearby: { items: [], total: 0 } } }, 200, 'Nearby - ZMarket', 'No devices nearby yet'],
  ['/m/nearby/details?id=dev-1', { isMobile: true, data: { nearbyDetails: device } }, 200, 'Device Details - ZMarket', 'Box in Shenzhen'],
  ['/app', {}, 200, 'Z-APP - ZMarket', 'menu-skeleton'],
  ['/devices/zcloud/create', {}, 200, 'Create Z-CLOUD - ZMarket', 'menu-skeleton'],
  ['/account/password', { lang: 'zh' }, 200, '修改密码 - ZMarket', 'menu-skeleton'],
  ['/history', {}, 200, 'My Company History - ZMarket', 'menu-skeleton'],
  ['/no/such/page', {}, 404, 'Page Not Found - ZMarket', 'Sorry, the page you visited does not exist'],
  ['/market/nope', { lang: 'zh' }, 404, '页面不存在 - ZMarket', '抱歉，您访问的页面不存在'],
  // Issue 17: documents, recovery, the phone's download page.
  ['/terms-of-use', { url: '/terms-of-use', data: { document: { name: 'terms-of-use', html: '<h1>Terms of Use</h1><p>Rules.</p>', custom: false } } }, 200, 'Terms of Use - ZMarket', '<p>Rules.</p>'],
  ['/guide', { lang: 'zh', url: '/guide', data: { document: { name: 'guide', html: '<h1>用户指南</h1>', custom: false } } }, 200, '用户指南 - ZMarket', '下载 PDF'],
  ['/m/guide', { isMobile: true, url: '/m/guide', data: { document: { name: 'guide', html: '<h1>Guide</h1>', custom: false } } }, 200, 'User guide - ZMarket', 'tab-bar'],
  ['/forgot-password', {}, 200, 'Forgot password - ZMarket', 'Send the reset link'],
  ['/reset-password?token=t', { lang: 'zh' }, 200, '设置新密码 - ZMarket', '8-15'],
  // Issue 41: the phone console, in the mobile layout (the signed-in pages a skeleton on the server).
  ['/m/auth/signin?redirect=%2Fm%2Fwallet', { isMobile: true }, 200, 'Sign In - ZMarket', 'Sign in to ZMarket'],
  ['/m/auth/signup', { isMobile: true, lang: 'zh' }, 200, '注册 - ZMarket', 'tab-bar'],
  ['/m/forgot-password', { isMobile: true }, 200, 'Forgot password - ZMarket', 'Send the reset link'],
  ['/m/app', { isMobile: true }, 200, 'Z-APP - ZMarket', 'console-skeleton'],
  ['/m/app/details?id=i1', { isMobile: true, lang: 'zh' }, 200, 'Z-APP 详情 - ZMarket', 'tab-bar'],
  ['/m/wallet', { isMobile: true }, 200, 'Wallet - ZMarket', 'data-phone-account="signin"'],
  ['/m/notifications', { isMobile: true, lang: 'zh' }, 200, '通知 - ZMarket', 'console-skeleton'],
  ['/m/download', { isMobile: true, config: { downloadLinks: { windows: '', mac: '', android: '', ios: '' }, map: { tileUrl: '', center: { lat: 0, lng: 0 }, zoom: 3 } } }, 200, 'Download - ZMarket', 'No client downloads are offered here yet'],
];
