/** The fleet page: faceted search over the devices (filled in next). */
export function FleetPage() {
  return (
    <main id="main">
      <h1>Fleet</h1>
    </main>
  );
}
