// Identity calls of docs/api.md (/api/iam/v1, /api/iam/v2/login/password and /two-factor).
import { api } from './client';
import type { AccountCheck, ApiKey, ApiKeyBody, ApiKeyCreated, ListPage, MenuEntry, Organization, Profile, RecoveryAnswer, RecoveryCodes, RefreshData, RegisterBody, RegisterData, SessionData, TwoFactorSetup, TwoFactorStatus, VerifiedEmail } from './types';

const IAM = '/api/iam/v1';

export const signIn = (email: string, password: string) =>
  api.post<SessionData>('/api/iam/v2/login/password', { email, password }, { auth: 'none', skipUnauthorized: true });

/** The second step when two-factor sign-in is on: the challenge of the `two_factor_required` answer and a code. */
export const signInTwoFactor = (challenge: string, code: string, remember: boolean) =>
  api.post<SessionData>('/api/iam/v2/login/two-factor', { challenge, code, remember }, { auth: 'none', skipUnauthorized: true });

export const register = (body: RegisterBody) => api.post<RegisterData>(`${IAM}/register`, body, { auth: 'none' });

export const verifyEmail = (token: string) =>
  api.get<VerifiedEmail>(`${IAM}/verify-email`, { query: { token }, auth: 'none' });

export const refreshTokens = () => api.get<RefreshData>(`${IAM}/refresh`, { auth: 'refresh' });

export const switchContext = (smeId: string) => api.post<SessionData>(`${IAM}/switch`, { smeId });

export const logout = () => api.post<null>(`${IAM}/logout`, undefined, { skipUnauthorized: true });

/** Accepts the API's menu data defensively: anything that is not a list of entries becomes []. */
export function normalizeMenu(data: unknown): MenuEntry[] {
  if (!Array.isArray(data)) return [];
  return data
    .filter((e): e is MenuEntry => Boolean(e) && typeof (e as MenuEntry).path === 'string')
    .map((e) => ({ ...e, children: e.children ? normalizeMenu(e.children) : undefined }));
}

export const fetchMenus = () => api.get<unknown>(`${IAM}/menus`, { skipUnauthorized: true }).then(normalizeMenu);

export const fetchProfile = () => api.get<Profile>(`${IAM}/account/profile`);
/** Whose session a token is, asked before that session is stored (/pc-web). */
export const fetchProfileOf = (token: string) => api.get<Profile>(`${IAM}/account/profile`, { bearer: token, skipUnauthorized: true });

export const updateProfileInfo = (name: string) => api.put<Profile>(`${IAM}/account/profile/info`, { name });

export const changePassword = (old_password: string, new_password: string, confirm_password: string) =>
  api.put<null>(`${IAM}/account/password`, { old_password, new_password, confirm_password });

export function uploadAvatar(file: File) {
  const form = new FormData();
  form.append('file', file);
  return api.put<{ avatar_url: string }>(`${IAM}/account/profile/avatar`, form);
}

export const checkAccountDeletion = () => api.post<AccountCheck>(`${IAM}/account/check`);

export const deleteAccount = (password: string) => api.del<null>(`${IAM}/account`, { password });

export const fetchOrganizations = () => api.get<Organization[]>(`${IAM}/sme`);

/** Account recovery: each answers the same whether or not the address has an account. */
export const forgotPassword = (email: string) => api.post<RecoveryAnswer>(`${IAM}/password/forgot`, { email }, { auth: 'none' });
export const resetPassword = (token: string, password: string, confirm_password: string) =>
  api.post<null>(`${IAM}/password/reset`, { token, password, confirm_password }, { auth: 'none' });
export const resendVerification = (email: string, redirect?: string) =>
  api.post<RecoveryAnswer>(`${IAM}/verify-email/resend`, { email, redirect }, { auth: 'none' });

/** Personal API keys: the key itself is in the creation's answer only. */
export const fetchApiKeys = () => api.get<ListPage<ApiKey>>(`${IAM}/api-keys`);
export const createApiKey = (body: ApiKeyBody) => api.post<ApiKeyCreated>(`${IAM}/api-keys`, body);
export const revokeApiKey = (id: string) => api.del<null>(`${IAM}/api-keys/${encodeURIComponent(id)}`);

/** Two-factor sign-in on /account: status, start (secret, otpauth:// URI, QR code as SVG), confirm (recovery codes once), off. */
export const fetchTwoFactor = () => api.get<TwoFactorStatus>(`${IAM}/account/two-factor`);
export const startTwoFactor = () => api.post<TwoFactorSetup>(`${IAM}/account/two-factor/setup`);
export const confirmTwoFactor = (code: string) => api.post<RecoveryCodes>(`${IAM}/account/two-factor/confirm`, { code });
export const turnOffTwoFactor = (password: string, code: string) => api.post<null>(`${IAM}/account/two-factor/off`, { password, code });
