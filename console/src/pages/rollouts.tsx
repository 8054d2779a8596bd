/** The rollouts page: a company's rollouts (filled in next). */
export function RolloutsPage() {
  return (
    <main id="main">
      <h1>Rollouts</h1>
    </main>
  );
}
