/** One device's page (filled in next). */
export function DevicePage({ company, deviceId }: { company: string; deviceId: string }) {
  return (
    <main id="main">
      <h1>
        {deviceId} ({company})
      </h1>
    </main>
  );
}
