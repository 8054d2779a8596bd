/**
 * The console's frame: the sign-in form while no one is signed in, else the header (pages, company choice, who is
 * signed in, sign out) and the page the URL names.
 */

import { useEffect, useRef } from 'preact/hooks';
import { AdminApiClientsPage } from './pages/admin-api-clients.js';
import { AdminAuditPage } from './pages/admin-audit.js';
import { AdminCompaniesPage, AdminCompanyPage } from './pages/admin-companies.js';
import { AdminUserPage, AdminUsersPage } from './pages/admin-users.js';
import { AlertsPage } from './pages/alerts.js';
import { DashboardPage } from './pages/dashboard.js';
import { DevicePage } from './pages/device.js';
import { FleetPage } from './pages/fleet.js';
import { HistoryPage } from './pages/history.js';
import { IntegrationsPage } from './pages/integrations.js';
import { RolloutPage } from './pages/rollout.js';
import { RolloutsPage } from './pages/rollouts.js';
import { ScenariosPage } from './pages/scenarios.js';
import { decodeSegment, fleetHref, here, hrefOf, navigate } from './router.js';
import { can, claims, signOut, token } from './session.js';
import { SignIn } from './sign-in.js';
import { UserText, visibleText } from './user-text.js';

/** The pages of the header's navigation, by path; those with a `scope` only for tokens holding it. */
const PAGES: readonly { path: string; label: string; scope?: string }[] = [
  { path: '/', label: 'Dashboard' },
  { path: '/fleet', label: 'Fleet' },
  { path: '/scenarios', label: 'Scenarios' },
  { path: '/rollouts', label: 'Rollouts' },
  { path: '/history', label: 'History' },
  { path: '/alerts', label: 'Alerts', scope: 'alerts:read' },
  { path: '/integrations', label: 'Integrations', scope: 'webhooks:read' },
  { path: '/admin/companies', label: 'Companies', scope: 'companies:read' },
  { path: '/admin/users', label: 'Users', scope: 'users:read' },
  { path: '/admin/api-clients', label: 'API clients', scope: 'users:read' },
  { path: '/admin/audit', label: 'Audit', scope: 'users:read' },
];

/**
 * The company choice of a user of several companies: one of them, or all (no `company` parameter) where the page
 * shows several companies at once (the fleet, the dashboard); none on a device's page, which names its company in its
 * address, nor on the history page and the administration pages, whose forms have their own.
 */
function CompanyPicker() {
  const companies = claims.value?.companies ?? [];
  const { path, query } = here.value;
  if (companies.length < 2 || path.startsWith('/devices/') || path === '/history' || path.startsWith('/admin/')) return null;
  // A page of one company's resources (scenarios, alerts, webhooks) shows one company at a time.
  const allowsAll = path !== '/scenarios' && path !== '/alerts' && path !== '/integrations';
  const chosen = query.getAll('company');
  const change = (event: Event) => {
    const value = (event.currentTarget as HTMLSelectElement).value;
    const next = new URLSearchParams(query);
    next.delete('company');
    next.delete('page');
    // A webhook and a deliveries cursor belong to the company they were read for.
    next.delete('webhook');
    next.delete('cursor');
    if (value !== '') next.set('company', value);
    navigate(path, next);
  };
  return (
    <label class="company-picker">
      Company
      <select onChange={change} value={chosen.length === 1 ? chosen[0] : allowsAll ? '' : companies[0]}>
        {allowsAll && <option value="">All companies</option>}
        {companies.map((company) => (
          <option key={company} value={company}>
            {visibleText(company)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The page the URL's path names. */
function CurrentPage() {
  const { path } = here.value;
  const device = /^\/devices\/([^/]+)\/([^/]+)$/.exec(path);
  if (device !== null) return <DevicePage company={decodeSegment(device[1] ?? '')} deviceId={decodeSegment(device[2] ?? '')} />;
  const rollout = /^\/rollouts\/([^/]+)\/([^/]+)$/.exec(path);
  if (rollout !== null) return <RolloutPage company={decodeSegment(rollout[1] ?? '')} rolloutId={decodeSegment(rollout[2] ?? '')} />;
  const company = /^\/admin\/companies\/([^/]+)$/.exec(path);
  if (company !== null) return <AdminCompanyPage companyId={decodeSegment(company[1] ?? '')} />;
  if (path === '/admin/companies') return <AdminCompaniesPage />;
  const user = /^\/admin\/users\/([^/]+)$/.exec(path);
  if (user !== null) return <AdminUserPage username={decodeSegment(user[1] ?? '')} />;
  if (path === '/admin/users') return <AdminUsersPage />;
  if (path === '/admin/api-clients') return <AdminApiClientsPage />;
  if (path === '/admin/audit') return <AdminAuditPage />;
  if (path === '/rollouts') return <RolloutsPage />;
  if (path === '/scenarios') return <ScenariosPage />;
  if (path === '/fleet') return <FleetPage />;
  if (path === '/history') return <HistoryPage />;
  if (path === '/alerts') return <AlertsPage />;
  if (path === '/integrations') return <IntegrationsPage />;
  if (path === '/') return <DashboardPage />;
  return (
    <main id="main">
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <a href={fleetHref()}>Go to the fleet</a>.
      </p>
    </main>
  );
}

/** Moves the keyboard focus to the page's `<main>` (made focusable for it): the skip link, and each change of page. */
function focusMain(): void {
  const main = document.getElementById('main');
  if (main === null) return;
  main.setAttribute('tabindex', '-1');
  main.focus();
}

export function App() {
  const { path } = here.value;
  const shownPath = useRef<string | null>(null);
  const signedIn = token.value !== null;
  // A new page takes the focus, as a page load would put it at the start: a keyboard or screen reader user is not
  // left on the link or button that led there, which the old page took away. Not on the first page shown.
  useEffect(() => {
    if (!signedIn) return;
    if (shownPath.current !== null && shownPath.current !== path) focusMain();
    shownPath.current = path;
  }, [path, signedIn]);
  if (!signedIn) return <SignIn />;
  return (
    <>
      {/* A button, not a link to #main: the address's fragment is the page's state, so the skip moves the focus. */}
      <button type="button" class="skip-link" onClick={focusMain}>
        Skip to the page
      </button>
      <header class="top">
        <span class="brand">Device scenario console</span>
        <nav aria-label="Pages">
          <ul>
            {PAGES.filter((page) => page.scope === undefined || can(page.scope)).map((page) => (
              <li key={page.path}>
                <a
                  href={page.path === '/fleet' ? fleetHref() : hrefOf(page.path)}
                  aria-current={(page.path === '/' ? path === '/' : path.startsWith(page.path)) ? 'page' : undefined}
                >
                  {page.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <CompanyPicker />
        <span class="who">
          Signed in as <UserText text={claims.value?.subject ?? ''} />
        </span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <CurrentPage />
    </>
  );
}
