// The API's shapes the UI uses, named from the generated src/api/schema.d.ts (the server's OpenAPI
// document; `npm run api-types` regenerates it). Nothing here restates a field: where the UI reads a
// shape differently from the document, the difference is written out with its reason.
import type { components } from './schema';

type Schemas = components['schemas'];

/**
 * utoipa leaves `Option<T>` fields (and `#[serde(default)]` ones) out of `required`, but the server
 * serializes them always, as null when empty: for these shapes every field is present.
 */
type AlwaysSent<T> = Required<T>;

/** The `data` of a list call (`Envelope_List_*` in the document). */
export interface ListPage<T> {
  items: T[];
  total: number;
}

export type App = Schemas['App'];
/** An app as a card shows it: the server-rendered list pages leave out what no card shows
 * (src/market/service.rs `NOT_ON_CARDS`); a fetched list's apps are cards too. */
export type AppCardData = Omit<App, 'description' | 'requirements' | 'kind' | 'version' | 'top_pick'>;
/** An app with its offers, cheapest first (the details page). */
export type AppDetails = AlwaysSent<Schemas['AppDetails']>;
export type DownloadLinks = Schemas['DownloadLinks'];
export type GpuInfo = Schemas['Gpu'];
export type Organization = Schemas['Organization'];
export type UserInfo = Schemas['UserInfo'];
export type Profile = Schemas['Profile'];
export type AccountCheck = Schemas['AccountCheck'];
export type ApiKey = AlwaysSent<Schemas['ApiKey']>;
export type ApiKeyCreated = AlwaysSent<Schemas['ApiKeyCreated']>;
export type ApiKeyScope = Schemas['Scope'];
export type ApiKeyBody = { name: string; expires_at: string; scopes: ApiKeyScope[]; password?: string };
export type TwoFactorStatus = Schemas['TwoFactorStatus'];
export type TwoFactorSetup = Schemas['TwoFactorSetup'];
export type RecoveryCodes = Schemas['RecoveryCodes'];
export type RefreshData = Schemas['RefreshResponse'];
export type RegisterData = Schemas['RegisterResponse'];
export type VerifiedEmail = Schemas['EmailVerified'];
export type JoinResult = Schemas['JoinResult'];
export type JoinInvitation = Schemas['JoinInvitation'];
export type NotificationStats = Schemas['Stats'];
export type NotificationItem = Schemas['Notification'];
export type HostFree = Schemas['HostFree'];
export type PendingDevice = Schemas['PendingDevice'];
export type ZcloudRental = Schemas['ZcloudRental'];
export type Member = Schemas['Member'];
export type MemberRecord = AlwaysSent<Schemas['MemberRecord']>;
export type HistoryEntry = AlwaysSent<Schemas['HistoryEntry']>;
export type Assignment = Schemas['Assignment'];
export type Wallet = AlwaysSent<Schemas['Wallet']>;
export type WalletEntry = AlwaysSent<Schemas['Entry']>;
export type WalletDay = Schemas['Day'];
export type Bill = Schemas['Bill'];
export type TopUpInfo = Schemas['TopUpInfo'];
export type EntryKind = Schemas['EntryKind'];
export type BillStatus = Schemas['BillStatus'];

export type Installation = AlwaysSent<Schemas['Installation']>;
export type InstallationDetails = Installation & { history: AlwaysSent<Schemas['StateEvent']>[]; holds: Schemas['Capacity'] };
export type AiCompute = Installation & { endpoint: string | null; gpus: GpuInfo[] };
export type DeviceFit = AlwaysSent<Schemas['DeviceFit']>;

export type Device = AlwaysSent<Omit<Schemas['Device'], 'spec'>> & { spec: AlwaysSent<Schemas['Spec']> };

/** The document types `apps` as plain objects; they are the market's apps. */
export type NearbyDevice = AlwaysSent<Omit<Schemas['NearbyDevice'], 'apps'>> & { apps: App[] | null };

/**
 * Request bodies are bags of optional fields on the server (a missing field gets its own message);
 * the UI sends every field.
 */
type Body<T> = { [K in keyof T]-?: NonNullable<T[K]> };

export type AssignBody = Body<Schemas['AssignRequest']>;
export type ZcloudBody = Body<Schemas['ZcloudRequest']>;
export type SharingBody = Body<Schemas['SharingRequest']>;
/** Both null: the location is cleared. */
export type LocationBody = Required<Schemas['LocationRequest']>;
export type RegisterBody = Body<Omit<Schemas['RegisterRequest'], 'username' | 'redirect'>> & { username?: string; redirect?: string };
/** Forgot password and resend verification answer this for every address (no account enumeration). */
export type RecoveryAnswer = Schemas['RecoveryAnswer'];

// Friends, tags, messages (docs/social.md).
export type Friend = AlwaysSent<Schemas['Friend']>;
export type FriendRequest = Schemas['FriendRequest'];
export type Tag = Schemas['Tag'];
export type BlockedPerson = Schemas['BlockedPerson'];
export type Message = Schemas['Message'];
export type Peer = AlwaysSent<Schemas['Peer']>;
export type Conversation = AlwaysSent<Omit<Schemas['Conversation'], 'peer'>> & { peer: Peer };
export type SocialStats = Schemas['SocialStats'];

export type UserType = Schemas['UserType'];
/** The session of sign-in, switch and pc-web. */
export type SessionData = Schemas['Session'];

/** The reasons `POST /account/check` names (docs/api.md), each with its own text. */
export type DeletionReason = 'devices_linked' | 'apps_rented' | 'balance_outstanding' | 'companies_joined';

/**
 * A menu entry as the UI reads it: defensively (normalizeMenu), since docs/product.md §3 lets `meta.isLink`
 * carry a link and older menus leave fields out. `children` is absent when empty.
 */
export type MenuEntry = Omit<Schemas['MenuEntry'], 'component' | 'meta' | 'children'> & {
  component?: string;
  meta?: Partial<Omit<Schemas['MenuMeta'], 'isLink'>> & { isLink?: string | boolean };
  children?: MenuEntry[];
};

/** A demand (while `order_pending`) or an order (docs/api.md §Demands and orders). */
export type Order = AlwaysSent<Omit<Schemas['Order'], 'history' | 'provider'>> & {
  provider: Schemas['Party'] | null;
  history: AlwaysSent<Schemas['OrderEvent']>[];
};
/** `need` and `have` are numbers or strings by field (`have` null when unknown). */
export type Gap = { field: string; need: number | string | boolean; have: number | string | boolean | null };
export type DeviceCheck = Omit<Schemas['DeviceCheck'], 'gaps'> & { gaps: Gap[] };
export type DemandBody = {
  name: string;
  app_id: string;
  gpu_count: number;
  gpu_models: string;
  distance_km: number | null;
  lat: number | null;
  lng: number | null;
  hours: number;
  price_per_hour: number;
  /** The lowest CUDA the box's driver must run, "12.4"; null = any. */
  min_cuda: string | null;
  /** Bytes of VRAM each GPU must have; null = any. */
  min_vram: number | null;
};

/** A person as the operator sees them (GET /api/ops/v1/users). */
export type OpsUser = AlwaysSent<Schemas['UserRow']>;
/** One operator write (GET /api/ops/v1/audit). */
export type AuditEntry = Schemas['AuditEntry'];
/** An app as the operator sees it (GET /api/ops/v1/apps). */
export type OpsApp = AlwaysSent<Schemas['OpsApp']>;
/** The body of POST /api/ops/v1/apps (every field) and PUT /api/ops/v1/apps/{id} (any). */
export type OpsAppRequest = Schemas['AppRequest'];
/** POST /api/ops/v1/apps/{id}/image: the archive stored and the image the app installs. */
export type ImageUpload = Schemas['ImageUpload'];
/** The market at a glance (GET /api/ops/v1/overview). */
export type OpsOverview = Schemas['Overview'];
/** The market's settings in force (GET/PUT /api/ops/v1/settings). */
export type MarketSettings = Schemas['MarketSettings'];
/** A change of the settings: any of them. */
export type SettingsChange = Schemas['SettingsRequest'];
/** A top-up code as the operator lists it (the code itself is never kept). */
export type OpsCode = Schemas['CodeRow'];
/** Codes just issued (shown once). */
export type OpsIssuedCodes = Schemas['IssuedCodes'];

// Snapshots (issue 40, docs/data.md).
/** One archive of an installation: its container's changes, every volume, the manifest and version. */
export type Snapshot = AlwaysSent<Schemas['Snapshot']>;
/** An installation's daily backup: on or off, and how many of its backups are kept (1-30). */
export type BackupSchedule = Schemas['Backups'];
/** `GET /apps/{id}/snapshots`: the installation's snapshots and its daily backup. */
export type InstallationSnapshots = Omit<Schemas['SnapshotList'], 'items'> & { items: Snapshot[] };
