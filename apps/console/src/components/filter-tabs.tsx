import { Link } from '../router.tsx';

/** Links that show a list filtered one way or another (by status), the one shown marked as the current page. */
export function FilterTabs<T extends string>({
  label,
  tabs,
  current,
  path,
}: {
  label: string;
  tabs: ReadonlyArray<{ value: T | ''; label: string }>;
  current: T | '';
  /** The page's path: each tab links to `<path>?status=<value>`. */
  path: string;
}) {
  return (
    <nav class="filter-tabs" aria-label={label}>
      <ul>
        {tabs.map((tab) => (
          <li key={tab.value || 'all'}>
            <Link to={`${path}?status=${tab.value}`} aria-current={tab.value === current ? 'page' : undefined}>
              {tab.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
