// Every path of SPEC.md §2, named once. Components use these, never literals.
const withQuery = (path: string, query: Record<string, string | number | undefined | null>) => {
  const parts: string[] = [];
  for (const key of Object.keys(query)) {
    const v = query[key];
    if (v !== undefined && v !== null && v !== '') parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(v))}`);
  }
  return parts.length ? `${path}?${parts.join('&')}` : path;
};

export const paths = {
  root: '/',
  market: {
    home: '/market',
    more: (q: { category?: string; keyword?: string } = {}) => withQuery('/market/more', q),
    details: (id: string) => withQuery('/market/details', { id }),
  },
  nearby: {
    home: '/nearby',
    details: (id: string) => withQuery('/nearby/details', { id }),
    map: '/nearby/map',
  },
  onDemand: { home: '/on-demand', placeOrder: '/on-demand/place-an-order' },
  auth: {
    root: '/auth',
    signIn: (redirect?: string) => withQuery('/auth/signin', { redirect }),
    signUp: '/auth/signup',
  },
  checkEmail: (email?: string) => withQuery('/check-email', { email }),
  emailVerified: '/email-verified',
  companyEmail: '/company-email',
  download: '/m/download',
  errors: { forbidden: '/403', notFound: '/404', offline: '/500' },
  smeJoin: '/iam/v1/sme/join',
  pcWeb: '/pc-web',
  mobile: {
    root: '/m',
    market: '/m/market',
    more: (q: { category?: string; keyword?: string } = {}) => withQuery('/m/market/more', q),
    details: (id: string) => withQuery('/m/market/details', { id }),
    nearby: '/m/nearby',
    nearbyDetails: (id: string) => withQuery('/m/nearby/details', { id }),
  },
  console: {
    app: '/app',
    appDetails: (id?: string) => withQuery('/app/details', { id }),
    aiCompute: '/app/aicompute',
    devices: '/devices',
    link: '/devices/link',
    deviceDetails: (id?: string) => withQuery('/devices/details', { id }),
    zcloudCreate: '/devices/zcloud/create',
    company: '/company',
    allocate: '/company/allocate',
    companyHistory: '/company/history',
    friends: '/friends',
    tags: '/friends/tags',
    wallet: '/wallet',
    account: '/account',
    username: '/account/username',
    password: '/account/password',
    messages: '/messages',
    demands: '/demands-and-offers',
    history: '/history',
  },
  /** Operator-provided legal texts, served from assets/ by the binary (see ui/README.md). */
  terms: '/assets/terms-of-use.html',
  privacy: '/assets/privacy-policy.html',
} as const;

export { withQuery };
