/** One rollout's page (filled in next). */
export function RolloutPage({ company, rolloutId }: { company: string; rolloutId: string }) {
  return (
    <main id="main">
      <h1>
        Rollout {rolloutId} ({company})
      </h1>
    </main>
  );
}
