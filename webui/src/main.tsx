// wlmon's Perses UI: the dashboards provisioned in the Perses server, drawn with the
// @perses-dev packages from npm. Upstream's own app cannot be built from the npm registry
// (it needs @perses-dev/client and @perses-dev/spec, which npm does not serve), so this
// small app is embedded in the server in its place (docs/perses.md).
import { Box, Button, CircularProgress, CssBaseline, Link, Stack, TextField, ThemeProvider, Typography } from '@mui/material';
import {
  ChartsProvider,
  ErrorAlert,
  ErrorBoundary,
  SnackbarProvider,
  generateChartsTheme,
  getTheme,
} from '@perses-dev/components';
import { ViewDashboard } from '@perses-dev/dashboards';
import { PluginRegistry, ValidationProvider } from '@perses-dev/plugin-system';
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import React, { FormEvent, ReactElement, useMemo, useState } from 'react';
import ReactDOM from 'react-dom/client';
import {
  Link as RouterLink,
  Navigate,
  Outlet,
  RouterProvider,
  createBrowserRouter,
  useLocation,
  useParams,
} from 'react-router-dom';
import { QueryParamProvider } from 'use-query-params';
import { ReactRouter6Adapter } from 'use-query-params/adapters/react-router-6';
import { SignInRequired, enableTokenRefresh, getDashboard, getJSON, listDashboards, makeDatasourceApi, signIn } from './api';
import { AlertsView } from './alerts';
import { pluginLoader } from './plugins';

const PROJECT = 'wlmon';

const queryClient = new QueryClient({
  defaultOptions: { queries: { refetchOnWindowFocus: false, retry: 0 } },
});

function Failure({ error }: { error: unknown }): ReactElement {
  const location = useLocation();
  if (error instanceof SignInRequired) {
    return <Navigate to={`/sign-in?redirect=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  }
  return <ErrorAlert error={error as Error} />;
}

function Loading(): ReactElement {
  return (
    <Stack width="100%" sx={{ alignItems: 'center', p: 4 }}>
      <CircularProgress />
    </Stack>
  );
}

function HomeView(): ReactElement {
  const { data, error, isLoading } = useQuery(['dashboards', PROJECT], () => listDashboards(PROJECT));
  if (isLoading) return <Loading />;
  if (error) return <Failure error={error} />;
  return (
    <Box sx={{ p: 3 }}>
      <Typography variant="h1" sx={{ mb: 2 }}>
        wlmon dashboards
      </Typography>
      <Stack component="ul" data-testid="dashboard-list">
        {(data ?? []).map((d) => (
          <li key={d.metadata.name}>
            <Link component={RouterLink} to={`/projects/${d.metadata.project}/dashboards/${d.metadata.name}`}>
              {d.spec.display?.name ?? d.metadata.name}
            </Link>
          </li>
        ))}
      </Stack>
      <Typography variant="h2" sx={{ mt: 3, mb: 1 }}>
        Alerts
      </Typography>
      <Link component={RouterLink} to="/alerts" data-testid="alerts-link">
        Alerts in Alertmanager: active, inhibited, silenced
      </Link>
    </Box>
  );
}

function DashboardView(): ReactElement {
  const { projectName = PROJECT, dashboardName = '' } = useParams();
  const dashboard = useQuery(['dashboard', projectName, dashboardName], () => getDashboard(projectName, dashboardName));
  const globals = useQuery(['globaldatasources'], () => getJSON<unknown[]>('/api/v1/globaldatasources'));
  const locals = useQuery(['datasources', projectName], () =>
    getJSON<unknown[]>(`/api/v1/projects/${encodeURIComponent(projectName)}/datasources`)
  );
  const datasourceApi = useMemo(
    () => makeDatasourceApi(globals.data ?? [], locals.data ?? []),
    [globals.data, locals.data]
  );
  const error = dashboard.error ?? globals.error ?? locals.error;
  if (error) return <Failure error={error} />;
  if (!dashboard.data || !globals.data || !locals.data) return <Loading />;
  return (
    <Box component="main" sx={{ flexGrow: 1, overflow: 'hidden' }}>
      <ErrorBoundary FallbackComponent={ErrorAlert}>
        <PluginRegistry
          pluginLoader={pluginLoader}
          defaultPluginKinds={{ Panel: 'TimeSeriesChart', TimeSeriesQuery: 'PrometheusTimeSeriesQuery' }}
        >
          <ValidationProvider>
            <ViewDashboard
              key={`${projectName}/${dashboardName}`}
              dashboardResource={dashboard.data}
              datasourceApi={datasourceApi}
              isReadonly={true}
              isEditing={false}
              isVariableEnabled={true}
              isDatasourceEnabled={true}
              isInitialVariableSticky={true}
              dashboardTitleComponent={
                <Typography variant="h2">
                  <Link component={RouterLink} to="/">
                    wlmon
                  </Link>{' '}
                  / {dashboard.data.spec.display?.name ?? dashboardName}{' '}
                  <Link component={RouterLink} to="/alerts" variant="body1" sx={{ ml: 2 }}>
                    alerts in Alertmanager
                  </Link>
                </Typography>
              }
            />
          </ValidationProvider>
        </PluginRegistry>
      </ErrorBoundary>
    </Box>
  );
}

function SignInView(): ReactElement {
  const location = useLocation();
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  const [message, setMessage] = useState('');
  const redirect = new URLSearchParams(location.search).get('redirect') ?? '/';
  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    try {
      await signIn(login, password);
      queryClient.clear();
      // Only a path on this server: never an absolute URL from the query string.
      window.location.assign(redirect.startsWith('/') && !redirect.startsWith('//') ? redirect : '/');
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  return (
    <Stack component="form" onSubmit={submit} spacing={2} sx={{ maxWidth: 360, m: 'auto', mt: 8 }}>
      <Typography variant="h1">wlmon: sign in</Typography>
      <TextField label="Username" name="login" value={login} onChange={(e) => setLogin(e.target.value)} />
      <TextField
        label="Password"
        name="password"
        type="password"
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      <Button type="submit" variant="contained" name="sign-in">
        Sign in
      </Button>
      {message && <Typography color="error">{message}</Typography>}
    </Stack>
  );
}

function Shell(): ReactElement {
  const theme = useMemo(() => getTheme('light'), []);
  const chartsTheme = useMemo(() => generateChartsTheme(theme, {}), [theme]);
  return (
    <ThemeProvider theme={theme}>
      <CssBaseline />
      <ChartsProvider chartsTheme={chartsTheme}>
        <SnackbarProvider anchorOrigin={{ vertical: 'top', horizontal: 'right' }} variant="default" content="">
          <QueryParamProvider adapter={ReactRouter6Adapter}>
            <Box sx={{ display: 'flex', minHeight: '100vh', backgroundColor: theme.palette.background.default }}>
              <Outlet />
            </Box>
          </QueryParamProvider>
        </SnackbarProvider>
      </ChartsProvider>
    </ThemeProvider>
  );
}

const router = createBrowserRouter([
  {
    element: <Shell />,
    children: [
      { path: '/', element: <HomeView /> },
      { path: '/projects', element: <HomeView /> },
      { path: '/projects/:projectName', element: <HomeView /> },
      { path: '/projects/:projectName/dashboards/:dashboardName', element: <DashboardView /> },
      { path: '/alerts', element: <AlertsView fallback={(e) => <Failure error={e} />} /> },
      { path: '/sign-in', element: <SignInView /> },
      { path: '*', element: <Navigate to="/" replace /> },
    ],
  },
]);

enableTokenRefresh();

ReactDOM.createRoot(document.getElementById('root') as HTMLElement).render(
  <React.StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </React.StrictMode>
);
