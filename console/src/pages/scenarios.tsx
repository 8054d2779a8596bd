/** The scenarios page (filled in next). */
export function ScenariosPage() {
  return (
    <main id="main">
      <h1>Scenarios</h1>
    </main>
  );
}
