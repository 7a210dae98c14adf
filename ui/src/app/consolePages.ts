// The signed-in pages the UI knows (SPEC.md §2), by path: title key and a lazily loaded page.
// Menu entries from GET /api/iam/v1/menus become routes; their `component` names (or paths) pick these.
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import type { MessageKey } from '../i18n';

type Page = LazyExoticComponent<ComponentType>;

const placeholder = lazy(() => import('../pages/console/AreaPage'));
const devices = lazy(() => import('../pages/devices/DevicesPage'));
const deviceLink = lazy(() => import('../pages/devices/DeviceLinkPage'));
const deviceDetails = lazy(() => import('../pages/devices/DeviceDetailsPage'));
const zcloudCreate = lazy(() => import('../pages/devices/ZcloudCreatePage'));
const company = lazy(() => import('../pages/companies/CompanyPage'));
const allocate = lazy(() => import('../pages/companies/AllocatePage'));
const companyHistory = lazy(() => import('../pages/companies/CompanyHistoryPage'));
const myHistory = lazy(() => import('../pages/companies/MyHistoryPage'));
const account = lazy(() => import('../pages/account/AccountPage'));
const username = lazy(() => import('../pages/account/UsernamePage'));
const password = lazy(() => import('../pages/account/PasswordPage'));

export interface ConsolePage {
  path: string;
  titleKey: MessageKey;
  component: string;
  page: Page;
}

export const consolePages: ConsolePage[] = [
  { path: '/app', titleKey: 'z_app', component: 'app', page: placeholder },
  { path: '/app/details', titleKey: 'app_details', component: 'app/details', page: placeholder },
  { path: '/app/aicompute', titleKey: 'ai_compute', component: 'app/aicompute', page: placeholder },
  { path: '/devices', titleKey: 'devices', component: 'devices', page: devices },
  { path: '/devices/link', titleKey: 'link_device', component: 'devices/link', page: deviceLink },
  { path: '/devices/details', titleKey: 'device_details', component: 'devices/details', page: deviceDetails },
  { path: '/devices/zcloud/create', titleKey: 'create_zcloud', component: 'devices/zcloud/create', page: zcloudCreate },
  { path: '/company', titleKey: 'company', component: 'company', page: company },
  { path: '/company/allocate', titleKey: 'allocate', component: 'company/allocate', page: allocate },
  { path: '/company/history', titleKey: 'company_history', component: 'company/history', page: companyHistory },
  { path: '/friends', titleKey: 'friends', component: 'friends', page: placeholder },
  { path: '/friends/tags', titleKey: 'friend_tags', component: 'friends/tags', page: placeholder },
  { path: '/wallet', titleKey: 'wallet', component: 'wallet', page: placeholder },
  { path: '/account', titleKey: 'account', component: 'account', page: account },
  { path: '/account/username', titleKey: 'change_username', component: 'account/username', page: username },
  { path: '/account/password', titleKey: 'change_password', component: 'account/password', page: password },
  { path: '/messages', titleKey: 'messages', component: 'messages', page: placeholder },
  { path: '/demands-and-offers', titleKey: 'demands_and_offers', component: 'demands-and-offers', page: placeholder },
  { path: '/history', titleKey: 'my_company_history', component: 'history', page: myHistory },
];

const byPath = new Map(consolePages.map((p) => [p.path, p]));
const byComponent = new Map(consolePages.map((p) => [p.component, p]));

export function consoleTitleKey(path: string): MessageKey | null {
  return byPath.get(path)?.titleKey ?? null;
}

/** The page for a menu entry: by its component name, else by its path, else the generic area page. */
export function pageForEntry(component: string | undefined, path: string): Page {
  const name = (component ?? '').replace(/^\/+/, '').replace(/\/index$/, '').replace(/\.(vue|tsx?)$/, '');
  return byComponent.get(name)?.page ?? byPath.get(path)?.page ?? placeholder;
}
