// Friends, tags, blocks and messages of docs/api.md (/api/cim/v1, docs/social.md).
import { api } from './client';
import type {
  BlockedPerson,
  Conversation,
  Friend,
  FriendRequest,
  ListPage,
  Message,
  SocialStats,
  Tag,
} from './types';

const CIM = '/api/cim/v1';
const seg = encodeURIComponent;
/** The server's largest page (docs/social.md "Bounds"). */
const SOCIAL_PAGE_MAX = 100;

export const fetchSocialStats = () => api.get<SocialStats>(`${CIM}/stats`);

export const sendFriendRequest = (email: string) => api.post<FriendRequest>(`${CIM}/friends/requests`, { email });
export const fetchFriendRequests = () =>
  api.get<ListPage<FriendRequest>>(`${CIM}/friends/requests`, { query: { limit: SOCIAL_PAGE_MAX } });
export const answerFriendRequest = (id: string, answer: 'accept' | 'decline') =>
  api.post<FriendRequest>(`${CIM}/friends/requests/${seg(id)}/${answer}`);
export const cancelFriendRequest = (id: string) => api.del<FriendRequest>(`${CIM}/friends/requests/${seg(id)}`);

export const fetchFriends = (tag: string | null, offset = 0, limit = SOCIAL_PAGE_MAX) =>
  api.get<ListPage<Friend>>(`${CIM}/friends`, { query: { tag, offset, limit } });
export const fetchFriend = (userId: string) => api.get<Friend>(`${CIM}/friends/${seg(userId)}`);
/** `alias: null` clears it; `tags` replaces the friend's tags (missing ones are created). */
export const updateFriend = (userId: string, body: { alias: string | null; tags: string[] }) =>
  api.put<Friend>(`${CIM}/friends/${seg(userId)}`, body);
export const removeFriend = (userId: string) => api.del<null>(`${CIM}/friends/${seg(userId)}`);

export const fetchTags = () => api.get<ListPage<Tag>>(`${CIM}/tags`);
export const createTag = (name: string) => api.post<Tag>(`${CIM}/tags`, { name });
export const renameTag = (name: string, to: string) => api.put<Tag>(`${CIM}/tags/${seg(name)}`, { name: to });
export const deleteTag = (name: string) => api.del<null>(`${CIM}/tags/${seg(name)}`);

export const fetchBlocked = () => api.get<ListPage<BlockedPerson>>(`${CIM}/blocks`);
export const blockPerson = (userId: string) => api.put<null>(`${CIM}/blocks/${seg(userId)}`);
export const unblockPerson = (userId: string) => api.del<null>(`${CIM}/blocks/${seg(userId)}`);

export const fetchConversations = () =>
  api.get<ListPage<Conversation>>(`${CIM}/conversations`, { query: { limit: SOCIAL_PAGE_MAX } });
/** Newest first; `before` (a message id) pages backwards. */
export const fetchHistory = (userId: string, before: string | null, limit: number, signal?: AbortSignal) =>
  api.get<ListPage<Message>>(`${CIM}/conversations/${seg(userId)}/messages`, { query: { before, limit }, signal });
export const sendMessage = (to_user_id: string, body: string) => api.post<Message>(`${CIM}/messages`, { to_user_id, body });
export const markConversationRead = (userId: string) => api.put<null>(`${CIM}/conversations/${seg(userId)}/read`);
