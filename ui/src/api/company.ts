// Company calls of API.md (/api/iam/v1/sme…, /api/ebs/v1/sme/resources…).
import { api } from './client';
import type { ListPage, Member, MemberRecord, Organization } from './types';

const IAM = '/api/iam/v1';

export const createCompany = (name: string) => api.post<Organization>(`${IAM}/sme`, { name });
export const updateCompany = (name: string) => api.post<Organization>(`${IAM}/sme/update`, { name });
export const deleteCompany = () => api.del<null>(`${IAM}/sme`);
export const fetchMembers = () => api.get<ListPage<Member>>(`${IAM}/sme/members`);
export const removeMember = (user_id: string) => api.post<null>(`${IAM}/sme/remove-member`, { user_id });
export const inviteMember = (email: string) => api.post<MemberRecord>(`${IAM}/sme/invite`, { email });
export const joinCompany = (code: string) => api.get<{ sme_id: string; status: string }>(`${IAM}/sme/join`, { query: { code } });
export const applyToCompany = (sme_id: string) => api.post<MemberRecord>(`${IAM}/sme/apply`, { sme_id });
export const fetchMemberRecords = () => api.get<ListPage<MemberRecord>>(`${IAM}/sme/member/records`);
export const answerMemberRecord = (id: string, answer: 'accept' | 'decline') =>
  api.post<MemberRecord>(`${IAM}/sme/member/records/${encodeURIComponent(id)}/${answer}`);

export interface AssignBody {
  user_id: string;
  resource_type: 'device' | 'app';
  resource_id: string;
}
export const assignResource = (body: AssignBody) => api.post<null>('/api/ebs/v1/sme/resources/assign', body);
export const unassignResource = (body: AssignBody) => api.post<null>('/api/ebs/v1/sme/resources/unassign', body);
