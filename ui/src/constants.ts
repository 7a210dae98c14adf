// Every business constant of docs/product.md §9, by name, plus the few limits of docs/product.md §5 and docs/api.md the UI checks.
// Nothing else in the UI spells these numbers.

/** Success code of the `{code, data, msg}` envelope. */
export const SUCCESS_CODE = 200;
/** Every request is aborted after this long. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Notification stats are polled this often for signed-in individual users. */
export const NOTIFICATION_POLL_MS = 10_000;
/** How often the access token's remaining lifetime is checked. */
export const TOKEN_REFRESH_CHECK_MS = 3_600_000;
/** Refresh when this many seconds or fewer remain on the access token. */
export const TOKEN_REFRESH_THRESHOLD_S = 3_600;
/** Unread notifications shown in the header preview. */
export const UNREAD_PREVIEW_LIMIT = 3;
/** Default interval of the stored polling helper. */
export const POLLING_DEFAULT_INTERVAL_MS = 1_000;

/** Toasts ("messages"). */
export const TOAST_DURATION_MS = 3_000;
export const TOAST_OFFSET_PX = 16;
export const TOAST_TYPES = ['success', 'info', 'warning', 'error'] as const;
/** Notifications (corner cards). */
export const NOTIFICATION_DURATION_MS = 4_500;
export const NOTIFICATION_GAP_PX = 16;
export const NOTIFICATION_POSITIONS = ['top-right', 'top-left', 'bottom-right', 'bottom-left'] as const;
/** Badge counts above this show as "99+". */
export const BADGE_MAX = 99;
/** The reference-counted loading overlay fades out over this long after the last close. */
export const LOADING_FADE_MS = 400;
/** Base z-index of overlays (loading, dialogs, toasts, notifications stack above it). */
export const BASE_Z_INDEX = 2_000;
/** Uncaught errors show an error toast this long. */
export const UNCAUGHT_ERROR_TOAST_MS = 3_000;

/** Duplicate-click guards. */
export const THROTTLE_MS = 1_000;
export const DEBOUNCE_MS = 500;
export const LONG_PRESS_MS = 1_000;

/** Sizes: bytes in steps of 1024, rounded to 2 decimals. */
export const SIZE_STEP = 1_024;
export const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;
export const SIZE_DECIMALS = 2;
/** Distances: haversine on this sphere, rounded up to whole kilometres. */
export const EARTH_RADIUS_KM = 6_371;

/** Languages; a browser language containing "zh" gives Chinese, otherwise English. */
export const LANGUAGES = ['zh', 'en'] as const;
/** Platform detection tokens (matched against the lower-cased user agent). */
export const PLATFORMS = ['win', 'mac', 'iphone', 'android'] as const;
// The user agents of phones are in lib/phone-rules.json (shared with the server's redirect).
/** Default theme colour. */
export const DEFAULT_THEME_COLOR = '#486aed';
/** Settings edits take effect within this long (server-side settings pushed to devices). */
export const SETTINGS_EFFECT_WINDOW_MS = 600_000;

/** Route-change progress bar. */
export const PROGRESS_MINIMUM = 0.3;
export const PROGRESS_SPEED_MS = 500;

/** Service worker caches are cleared and the page reloaded once per session (sessionStorage flag). */
export const SW_RELOAD_FLAG = 'zm_sw_cleared';

// docs/product.md §5 and docs/api.md limits the forms check before sending.
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 15;
export const USERNAME_MIN_LENGTH = 3;
export const USERNAME_MAX_LENGTH = 50;
export const ALIAS_MIN_LENGTH = 3;
export const ALIAS_MAX_LENGTH = 50;
export const COMPANY_NAME_MIN_LENGTH = 3;
export const COMPANY_NAME_MAX_LENGTH = 50;
/** Longest email address accepted (RFC 5321 path limit). */
export const EMAIL_MAX_LENGTH = 254;
export const AVATAR_MAX_BYTES = 3 * 1_024 * 1_024;
export const AVATAR_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'] as const;
export const AVATAR_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'gif'] as const;

/** docs/api.md: lists take `limit` at most 100. */
export const LIST_LIMIT_MAX = 100;
/** Cards per page on the market and nearby lists (small first pages keep server rendering cheap). */
export const PAGE_SIZE = 24;
/** The personal pseudo-organization. */
export const PERSONAL_SME_ID = 'user';
/** Cookie mirroring the language setting, read by the server renderer. */
export const LANG_COOKIE = 'zm_lang';
export const LANG_COOKIE_MAX_AGE_S = 31_536_000;
/** Smallest coin units per coin (money is an integer count of the smallest unit). */
export const COIN_DECIMALS = 2;
/** Entries and bills per page on the wallet page. */
export const WALLET_PAGE_SIZE = 20;
/** Days of income and expense in the wallet's chart. */
export const WALLET_CHART_DAYS = 30;

// Live events (docs/social.md): the stream asks for a 3 s retry; failures back off up to 30 s, and
// while the stream is unavailable the counts and open pages are polled.
export const LIVE_RETRY_MS = 3_000;
export const LIVE_RETRY_MAX_MS = 30_000;
export const LIVE_POLL_MS = 10_000;
/** Messages loaded per page of a conversation's history. */
export const MESSAGE_PAGE_SIZE = 30;
/** docs/api.md: a message body is 1-2000 characters. */
export const MESSAGE_MAX_LENGTH = 2_000;
/** docs/social.md: a tag name is 1-30 characters. */
export const TAG_MAX_LENGTH = 30;
/** docs/identity.md: an API key's name is 1-64 characters, no control characters. */
export const API_KEY_NAME_MAX_LENGTH = 64;
