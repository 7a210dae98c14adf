// Company calls of docs/api.md (/api/iam/v1/sme…, /api/ebs/v1/sme/resources…).
import { api } from './client';
import type { AssignBody, Assignment, HistoryEntry, JoinInvitation, JoinResult, ListPage, Member, MemberRecord, Organization } from './types';

const IAM = '/api/iam/v1';
const RESOURCES = '/api/ebs/v1/sme/resources';

export const createCompany = (name: string) => api.post<Organization>(`${IAM}/sme`, { name });
export const updateCompany = (name: string) => api.post<Organization>(`${IAM}/sme/update`, { name });
export const deleteCompany = () => api.del<null>(`${IAM}/sme`);
export const fetchMembers = () => api.get<ListPage<Member>>(`${IAM}/sme/members`, { query: { limit: 100 } });
export const removeMember = (user_id: string) => api.post<null>(`${IAM}/sme/remove-member`, { user_id });
export const leaveCompany = (sme_id: string) => api.post<null>(`${IAM}/sme/leave`, { sme_id });
export const inviteMember = (email: string, role: 'member' | 'admin' = 'member') =>
  api.post<MemberRecord>(`${IAM}/sme/invite`, { email, role });
/** The invitation of a link (changes nothing). */
export const fetchInvitation = (code: string) => api.get<JoinInvitation>(`${IAM}/sme/join`, { query: { code } });
/** Joins (accept) or declines the invitation of a link. */
export const answerInvitation = (code: string, accept: boolean) => api.post<JoinResult>(`${IAM}/sme/join`, { code, accept });
export const applyToCompany = (sme_id: string) => api.post<MemberRecord>(`${IAM}/sme/apply`, { sme_id });
export const fetchMemberRecords = (scope?: 'mine') =>
  api.get<ListPage<MemberRecord>>(`${IAM}/sme/member/records`, { query: { limit: 100, scope } });
export const answerMemberRecord = (id: string, answer: 'accept' | 'decline') =>
  api.post<MemberRecord>(`${IAM}/sme/member/records/${encodeURIComponent(id)}/${answer}`);
export const fetchCompanyHistory = (offset = 0, limit = 50) =>
  api.get<ListPage<HistoryEntry>>(`${IAM}/sme/history`, { query: { offset, limit } });
export const fetchMyHistory = (offset = 0, limit = 50) =>
  api.get<ListPage<HistoryEntry>>(`${IAM}/sme/history/mine`, { query: { offset, limit } });

export const assignResource = (body: AssignBody) => api.post<null>(`${RESOURCES}/assign`, body);
export const unassignResource = (body: AssignBody) => api.post<null>(`${RESOURCES}/unassign`, body);
export const fetchAssignments = (user_id?: string) =>
  api.get<ListPage<Assignment>>(RESOURCES, { query: { user_id, limit: 100 } });
