import { api } from './api.ts';
import type { Environment, SessionView } from './types.ts';

// The console's session (docs/CONSOLE.md, "Sessions"): the API key is sent once, to POST /sessions;
// from then on the HttpOnly session cookie authenticates every call. Nothing is kept in browser storage.

export const currentSession = () => api.get<SessionView>('/sessions/current');

export const signIn = (apiKey: string) => api.post<SessionView>('/sessions', { apiKey }, { signingIn: true });

export const signOut = () => api.delete<void>('/sessions/current');

export const switchEnvironment = (environment: Environment) => api.patch<SessionView>('/sessions/current', { environment });
