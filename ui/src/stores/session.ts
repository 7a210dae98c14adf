import { create } from 'zustand';
import type { MenuEntry, Organization, SessionData, UserInfo, UserType } from '../api/types';
import { PERSONAL_SME_ID } from '../constants';
import { readJson, storageGet, storageSet } from '../lib/storage';

/** localStorage keys of the session (docs/product.md §3), one key per field. */
export const SESSION_KEYS = {
  token: 'token',
  refreshToken: 'refresh_token',
  expire: 'access_token_expire',
  smeId: 'smeId',
  userType: 'userType',
  userInfo: 'userInfo',
  organizationList: 'organizationList',
} as const;

const emptyUser: UserInfo = { name: '', avatar_url: '', email: '' };

/** What is kept of a session: all the API hands over (docs/product.md §3 names each key). */
type StoredSession = SessionData;

export const emptySession: StoredSession = {
  token: '',
  refresh_token: '',
  access_token_expire: 0,
  smeId: PERSONAL_SME_ID,
  userType: 'user',
  userInfo: emptyUser,
  organizationList: [],
};

type MenuStatus = 'idle' | 'loading' | 'loaded' | 'failed';

interface SessionState extends StoredSession {
  /** True once the stored session was read (client only, after hydration starts). */
  loaded: boolean;
  menu: MenuEntry[] | null;
  menuStatus: MenuStatus;
}

/** Empty at start so the server render and the first client render agree; loaded in an effect. */
export const useSession = create<SessionState>()(() => ({
  ...emptySession,
  loaded: false,
  menu: null,
  menuStatus: 'idle',
}));

function isUserType(v: unknown): v is UserType {
  return v === 'user' || v === 'admin' || v === 'member';
}

export function readStoredSession(): StoredSession {
  const expire = Number(storageGet(SESSION_KEYS.expire) ?? 0);
  const userType = storageGet(SESSION_KEYS.userType);
  const info = readJson<Partial<UserInfo>>(SESSION_KEYS.userInfo);
  const orgs = readJson<Organization[]>(SESSION_KEYS.organizationList);
  return {
    token: storageGet(SESSION_KEYS.token) ?? '',
    refresh_token: storageGet(SESSION_KEYS.refreshToken) ?? '',
    access_token_expire: Number.isFinite(expire) ? expire : 0,
    smeId: storageGet(SESSION_KEYS.smeId) || PERSONAL_SME_ID,
    userType: isUserType(userType) ? userType : 'user',
    userInfo: { ...emptyUser, ...(info ?? {}) },
    organizationList: Array.isArray(orgs) ? orgs : [],
  };
}

function writeStoredSession(s: StoredSession) {
  storageSet(SESSION_KEYS.token, s.token || null);
  storageSet(SESSION_KEYS.refreshToken, s.refresh_token || null);
  storageSet(SESSION_KEYS.expire, s.access_token_expire ? String(s.access_token_expire) : null);
  storageSet(SESSION_KEYS.smeId, s.smeId || PERSONAL_SME_ID);
  storageSet(SESSION_KEYS.userType, s.userType);
  storageSet(SESSION_KEYS.userInfo, JSON.stringify(s.userInfo));
  storageSet(SESSION_KEYS.organizationList, JSON.stringify(s.organizationList));
}

/** The session as the API client should use it: the store once loaded, storage before that. */
export function currentSession(): StoredSession {
  const state = useSession.getState();
  return state.loaded ? state : readStoredSession();
}

/** Reads storage into the store (first load, and when another tab changed it). */
export function loadSession() {
  const stored = readStoredSession();
  const prev = useSession.getState();
  // The menu depends on who is signed in and in which context; a token refresh keeps it.
  const keepMenu = Boolean(stored.token) && prev.smeId === stored.smeId && prev.userType === stored.userType &&
    prev.userInfo.email === stored.userInfo.email;
  useSession.setState({
    ...stored,
    loaded: true,
    ...(keepMenu ? {} : { menu: null, menuStatus: 'idle' as MenuStatus }),
  });
}

/** Stores a session from sign-in, switch or pc-web. The menu is reloaded by the guard. */
export function saveSession(data: Partial<SessionData>) {
  const s: StoredSession = {
    token: data.token ?? '',
    refresh_token: data.refresh_token ?? '',
    access_token_expire: Number(data.access_token_expire ?? 0),
    smeId: data.smeId || PERSONAL_SME_ID,
    userType: isUserType(data.userType) ? data.userType : 'user',
    userInfo: { ...emptyUser, ...(data.userInfo ?? {}) },
    organizationList: Array.isArray(data.organizationList) ? data.organizationList : [],
  };
  writeStoredSession(s);
  useSession.setState({ ...s, loaded: true, menu: null, menuStatus: 'idle' });
}

/** Replaces only the tokens (after a refresh). */
export function saveTokens(token: string, refreshToken: string, expire: number) {
  storageSet(SESSION_KEYS.token, token);
  storageSet(SESSION_KEYS.refreshToken, refreshToken);
  storageSet(SESSION_KEYS.expire, String(expire));
  useSession.setState({ token, refresh_token: refreshToken, access_token_expire: expire });
}

export function updateUserInfo(patch: Partial<UserInfo>) {
  const info = { ...useSession.getState().userInfo, ...patch };
  storageSet(SESSION_KEYS.userInfo, JSON.stringify(info));
  useSession.setState({ userInfo: info });
}

/** Clears the token and everything tied to it (docs/product.md §4: cleared on expiry or on any 401). */
export function clearSession() {
  for (const key of Object.values(SESSION_KEYS)) storageSet(key, null);
  useSession.setState({ ...emptySession, loaded: true, menu: null, menuStatus: 'idle' });
}

export function setMenu(menu: MenuEntry[] | null, menuStatus: MenuStatus) {
  useSession.setState({ menu, menuStatus });
}

/** Replaces the organization list (after creating, joining, leaving or renaming a company). */
export function setOrganizations(list: Organization[]) {
  storageSet(SESSION_KEYS.organizationList, JSON.stringify(list));
  useSession.setState({ organizationList: list });
}
