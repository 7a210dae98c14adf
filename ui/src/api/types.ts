// Shapes of API.md. Field names are binding.

export interface Envelope<T> {
  code: number;
  data: T;
  msg: string;
}

export interface ListPage<T> {
  items: T[];
  total: number;
}

export type UserType = 'user' | 'admin' | 'member';

export interface Organization {
  id: string;
  name: string;
  network_id: string;
  owner: string;
}

export interface UserInfo {
  name: string;
  avatar_url: string;
  email: string;
}

/** The session returned by sign-in and switch. */
export interface SessionData {
  token: string;
  refresh_token: string;
  /** Epoch seconds. */
  access_token_expire: number;
  smeId: string;
  userType: UserType;
  userInfo: UserInfo;
  organizationList: Organization[];
}

export interface RefreshData {
  access_token: string;
  refresh_token: string;
  access_token_expire: number;
}

export interface MenuMeta {
  icon?: string;
  title?: string;
  isLink?: string | boolean;
  isHide?: boolean;
}

export interface MenuEntry {
  path: string;
  name: string;
  component?: string;
  meta?: MenuMeta;
  children?: MenuEntry[];
}

export interface Profile {
  id: string;
  email: string;
  name: string;
  avatar_url: string;
  created_at: string;
}

export type DeletionReason = 'devices_linked' | 'apps_rented' | 'balance_outstanding' | 'companies_joined';

export interface AccountCheck {
  deletable: boolean;
  reasons: DeletionReason[];
}

export interface AppRequirements {
  cpu_cores: number;
  memory_bytes: number;
  disk_bytes: number;
  gpu_count: number;
}

export interface App {
  id: string;
  name: string;
  summary: string;
  description: string;
  icon_url: string;
  category: string;
  display_type: string;
  tier: string;
  /** Smallest coin units per hour. */
  price_per_hour: number;
  publisher: string;
  version: string;
  requirements: AppRequirements;
}

export interface GpuInfo {
  name: string;
  passthrough: boolean;
  vram: number;
}

export interface NearbyDevice {
  id: string;
  name: string;
  type: string;
  status: string;
  distance_km: number;
  lat: number;
  lng: number;
  price_per_hour: number;
  gpus: GpuInfo[] | number | string;
  apps?: App[];
}

export interface DownloadLinks {
  windows: string;
  mac: string;
  android: string;
  ios: string;
}

export interface NotificationStats {
  total: number;
  read: number;
  unread: number;
  recent: number;
  pending_friend_requests_exists: boolean;
  member_records_unread: number;
}

export interface NotificationItem {
  id: string;
  kind: string;
  title: string;
  body: string;
  read: boolean;
  created_at: string;
}

export interface Device {
  id: string;
  name: string;
  type: string;
  status: string;
  sharing_mode: 'manual' | 'autopilot' | 'dedicated';
  rentable: boolean;
  price_per_hour: number;
  spec: { cpu_cores: number; memory_bytes: number; disk_bytes: number; gpus: GpuInfo[] };
  /** Live metrics of the last heartbeat; null before the first. */
  metrics?: { cpu_percent: number; memory_used_bytes: number; disk_used_bytes: number } | null;
  location: { lat: number; lng: number } | null;
  last_seen_at: string | null;
  /** Why a Z-CLOUD machine failed. */
  status_reason?: string | null;
  owner_kind?: 'user' | 'company';
  /** Z-CLOUD: the server-group device it runs on. */
  host_id?: string | null;
  created_at?: string;
}

/** What one server-group host has left for Z-CLOUD machines. */
export interface HostFree {
  cpu_cores: number;
  memory_bytes: number;
  disk_bytes: number;
  gpus: { name: string; passthrough: boolean; count: number }[];
}

export interface Member {
  user_id: string;
  name: string;
  email: string;
  role: string;
  joined_at: string;
  owner?: boolean;
}

export interface MemberRecord {
  id: string;
  kind: 'invite' | 'apply';
  sme_id: string;
  email: string;
  status: string;
  created_at: string;
  sme_name?: string;
  name?: string;
  role?: string;
  expires_at?: string | null;
  decided_at?: string | null;
  /** Whether the caller may accept or decline it now. */
  actionable?: boolean;
}

export interface HistoryEntry {
  id: string;
  sme_id: string;
  sme_name: string;
  actor_id: string | null;
  actor_name: string;
  action: string;
  subject_type: string;
  subject_id: string;
  subject_name: string;
  detail: string;
  created_at: string;
}

export interface Assignment {
  user_id: string;
  user_name: string;
  user_email: string;
  resource_type: 'device' | 'app';
  resource_id: string;
  assigned_at: string;
  assigned_by: string;
}
