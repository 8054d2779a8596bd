/**
 * The console's frame: the sign-in form while no one is signed in, else the header (pages, company choice, who is
 * signed in, sign out) and the page the URL names.
 */
import { DevicePage } from './pages/device.js';
import { FleetPage } from './pages/fleet.js';
import { ScenariosPage } from './pages/scenarios.js';
import { here, hrefOf, navigate } from './router.js';
import { claims, signOut, token } from './session.js';
import { SignIn } from './sign-in.js';

/** The pages of the header's navigation, by path. */
const PAGES = [
  { path: '/fleet', label: 'Fleet' },
  { path: '/scenarios', label: 'Scenarios' },
] as const;

/** The company choice of a user of several companies: one of them, or all (no `company` parameter). */
function CompanyPicker() {
  const companies = claims.value?.companies ?? [];
  if (companies.length < 2) return null;
  const { path, query } = here.value;
  const chosen = query.getAll('company');
  const change = (event: Event) => {
    const value = (event.currentTarget as HTMLSelectElement).value;
    const next = new URLSearchParams(query);
    next.delete('company');
    next.delete('page');
    if (value !== '') next.set('company', value);
    navigate(path, next);
  };
  return (
    <label class="company-picker">
      Company
      <select onChange={change} value={chosen.length === 1 ? chosen[0] : ''}>
        <option value="">All companies</option>
        {companies.map((company) => (
          <option key={company} value={company}>
            {company}
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
  if (device !== null) return <DevicePage company={decodeURIComponent(device[1] ?? '')} deviceId={decodeURIComponent(device[2] ?? '')} />;
  if (path === '/scenarios') return <ScenariosPage />;
  if (path === '/fleet') return <FleetPage />;
  return (
    <main id="main">
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <a href={hrefOf('/fleet')}>Go to the fleet</a>.
      </p>
    </main>
  );
}

export function App() {
  if (token.value === null) return <SignIn />;
  const { path } = here.value;
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <span class="brand">Device scenario console</span>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map((page) => (
              <li key={page.path}>
                <a href={hrefOf(page.path)} aria-current={path.startsWith(page.path) ? 'page' : undefined}>
                  {page.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <CompanyPicker />
        <span class="who">Signed in as {claims.value?.subject}</span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <CurrentPage />
    </>
  );
}
