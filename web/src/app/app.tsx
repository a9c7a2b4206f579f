import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { BrowserRouter, Navigate, Outlet, Route, Routes, useLocation, useParams } from 'react-router';
import { setCurrentProject } from '../lib/api/client';
import { Shell } from './shell';
import { ToastProvider } from '../components/toast';
import { ErrorBanner } from '../components/error-banner';
import { Skeleton } from '../components/skeleton';
import { firstProject, membershipOf, SessionProvider, useSession, useSignedIn } from '../lib/session';
import { SignInPage } from '../features/auth/sign-in';

// Routes under /app/. Pages other than sign-in load on demand (small first page). The project is
// in the URL (/app/p/:projectId/…) so links can be shared; the switcher changes it.

const SetupPage = lazy(() => import('../features/auth/setup'));
const AccountPage = lazy(() => import('../features/account/account'));
const OverviewPage = lazy(() => import('../features/overview/overview'));
const KeysPage = lazy(() => import('../features/keys/keys'));
const SettingsPage = lazy(() => import('../features/settings/settings'));
const loadMediaPage = () => import('../features/media/library');
const MediaPage = lazy(loadMediaPage);
const loadMediaDetailPage = () => import('../features/media/media-detail');
const MediaDetailPage = lazy(loadMediaDetailPage);
// Opened straight at the library or a media: fetch that page's code while the session is checked.
if (/^\/app\/p\/[^/]+\/media\/?$/.test(window.location.pathname)) void loadMediaPage();
else if (/^\/app\/p\/[^/]+\/media\/[^/]+$/.test(window.location.pathname)) void loadMediaDetailPage();
const TasksPage = lazy(() => import('../features/tasks/tasks'));
const EventsPage = lazy(() => import('../features/events/events'));
const WebhooksPage = lazy(() => import('../features/webhooks/webhooks'));
const WebhookDetailPage = lazy(() => import('../features/webhooks/webhooks-detail'));
const AdminPage = lazy(() => import('../features/admin/organisation'));
const AuditPage = lazy(() => import('../features/admin/audit'));
const InvitePage = lazy(() => import('../features/auth/invite'));
const RequestsPage = lazy(() => import('../features/operations/requests'));
const UsagePage = lazy(() => import('../features/operations/usage'));
const QueuePage = lazy(() => import('../features/operations/queue'));
const SystemPage = lazy(() => import('../features/operations/system'));
const AutomationsPage = lazy(() => import('../features/automations/automations'));
const AutomationBuilderPage = lazy(() => import('../features/automations/automation-builder'));

function Loading() {
  return (
    <div className="page">
      <Skeleton lines={4} />
    </div>
  );
}

/** Only for a signed-in person; otherwise to setup (first run) or sign-in (coming back here after). */
function RequireSession() {
  const { state } = useSession();
  const location = useLocation();
  if (state.status === 'loading') return <Loading />;
  if (state.status === 'setup') return <Navigate to="/setup" replace />;
  if (state.status === 'signed-out')
    return <Navigate to="/sign-in" replace state={{ from: location.pathname + location.search }} />;
  return <Outlet />;
}

/** A project route: the project must be one of the person's; it becomes the API client's project. */
function ProjectScope() {
  const { projectId } = useParams();
  const session = useSignedIn();
  const member = membershipOf(session, projectId);
  useEffect(() => {
    setCurrentProject(member ? (projectId ?? null) : null);
  }, [member, projectId]);
  if (!member) {
    return (
      <Shell>
        <div className="page">
          <ErrorBanner error={new Error('This project does not exist, or you are not a member of its organisation.')} />
        </div>
      </Shell>
    );
  }
  // Set synchronously too, so the page's first request names the project.
  setCurrentProject(projectId ?? null);
  return (
    <Shell>
      <Suspense fallback={<Loading />}>
        <Outlet />
      </Suspense>
    </Shell>
  );
}

function Home() {
  const { state } = useSession();
  if (state.status === 'loading') return <Loading />;
  if (state.status === 'setup') return <Navigate to="/setup" replace />;
  if (state.status === 'signed-out') return <Navigate to="/sign-in" replace />;
  const p = firstProject(state.session);
  return <Navigate to={p ? `/p/${p}/overview` : '/account'} replace />;
}

function Lazy({ children }: { children: ReactNode }) {
  return <Suspense fallback={<Loading />}>{children}</Suspense>;
}

export function App() {
  return (
    <BrowserRouter basename="/app">
      <ToastProvider>
        <SessionProvider>
          <Routes>
            <Route index element={<Home />} />
            <Route
              path="setup"
              element={
                <Lazy>
                  <SetupPage />
                </Lazy>
              }
            />
            <Route path="sign-in" element={<SignInPage />} />
            <Route
              path="invite"
              element={
                <Lazy>
                  <InvitePage />
                </Lazy>
              }
            />
            <Route element={<RequireSession />}>
              <Route
                path="account"
                element={
                  <Shell>
                    <Lazy>
                      <AccountPage />
                    </Lazy>
                  </Shell>
                }
              />
              <Route path="p/:projectId" element={<ProjectScope />}>
                <Route index element={<Navigate to="overview" replace />} />
                <Route path="overview" element={<OverviewPage />} />
                <Route path="media" element={<MediaPage />} />
                <Route path="media/:id" element={<MediaDetailPage />} />
                <Route path="tasks" element={<TasksPage />} />
                <Route path="events" element={<EventsPage />} />
                <Route path="webhooks" element={<WebhooksPage />} />
                <Route path="webhooks/:id" element={<WebhookDetailPage />} />
                <Route path="requests" element={<RequestsPage />} />
                <Route path="usage" element={<UsagePage />} />
                <Route path="queue" element={<QueuePage />} />
                <Route path="system" element={<SystemPage />} />
                <Route path="automations" element={<AutomationsPage />} />
                <Route path="automations/:id" element={<AutomationBuilderPage />} />
                <Route path="keys" element={<KeysPage />} />
                <Route path="settings" element={<SettingsPage />} />
                <Route path="admin" element={<AdminPage />} />
                <Route path="audit" element={<AuditPage />} />
              </Route>
            </Route>
            <Route path="*" element={<NotFound />} />
          </Routes>
        </SessionProvider>
      </ToastProvider>
    </BrowserRouter>
  );
}

function NotFound() {
  return (
    <main id="main" className="center-page">
      <h1>Page not found</h1>
      <p>
        <a href="/app/">Go to the start</a>
      </p>
    </main>
  );
}
