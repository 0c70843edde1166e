// Reads from the Perses server's HTTP API (same origin, the session cookies Perses sets at
// sign-in). A 401 becomes SignInRequired so the app can show the sign-in form.
import { DatasourceSelector, DashboardResource } from '@perses-dev/core';
import { DatasourceApi } from '@perses-dev/dashboards';

export class SignInRequired extends Error {}

const AUTH = '/api/auth/';

// Perses' access token lives 15 minutes, its refresh token a day (the session cookies):
// a request answered 401 asks /api/auth/refresh once and is sent again, as upstream's UI
// does, so a NOC screen left open keeps drawing. Every fetch goes through it, the
// plugins' queries through the proxy included.
export function enableTokenRefresh(): void {
  const plain = window.fetch.bind(window);
  window.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const res = await plain(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.pathname : input.url;
    if (res.status !== 401 || url.includes(AUTH)) return res;
    const refreshed = await plain(`${AUTH}refresh`, { method: 'POST', credentials: 'same-origin' });
    return refreshed.ok ? plain(input, init) : res;
  };
}

export async function getJSON<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (res.status === 401) {
    throw new SignInRequired(`${path}: sign-in required`);
  }
  if (!res.ok) {
    throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  }
  return (await res.json()) as T;
}

export async function signIn(login: string, password: string): Promise<void> {
  const res = await fetch('/api/auth/providers/native/login', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ login, password }),
  });
  if (!res.ok) {
    throw new Error(`sign-in refused (HTTP ${res.status})`);
  }
}

export function getDashboard(project: string, name: string): Promise<DashboardResource> {
  return getJSON(`/api/v1/projects/${encodeURIComponent(project)}/dashboards/${encodeURIComponent(name)}`);
}

export function listDashboards(project: string): Promise<DashboardResource[]> {
  return getJSON(`/api/v1/projects/${encodeURIComponent(project)}/dashboards`);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Datasource = any;

function matches(ds: Datasource, selector: DatasourceSelector): boolean {
  if (selector.kind !== ds.spec.plugin.kind) return false;
  if (!selector.name) return Boolean(ds.spec.default);
  return ds.metadata.name.toLowerCase() === selector.name.toLowerCase();
}

// The queries go through Perses' proxy (/proxy/globaldatasources/NAME/...), which adds the
// datasource's credentials server-side: the browser never holds them.
export function buildProxyUrl({ project, dashboard, name }: { project?: string; dashboard?: string; name: string }): string {
  let url = `${!project && !dashboard ? 'globaldatasources' : 'datasources'}/${encodeURIComponent(name)}`;
  if (dashboard) url = `dashboards/${encodeURIComponent(dashboard)}/${url}`;
  if (project) url = `projects/${encodeURIComponent(project)}/${url}`;
  return `/proxy/${url}`;
}

export function makeDatasourceApi(global: Datasource[], local: Datasource[]): DatasourceApi {
  return {
    buildProxyUrl,
    getDatasource: async (project, selector) =>
      local.find((ds) => ds.metadata.project === project && matches(ds, selector)),
    getGlobalDatasource: async (selector) => global.find((ds) => matches(ds, selector)),
    listDatasources: async (project, kind) =>
      local.filter((ds) => ds.metadata.project === project && (!kind || ds.spec.plugin.kind === kind)),
    listGlobalDatasources: async (kind) => global.filter((ds) => !kind || ds.spec.plugin.kind === kind),
  };
}
