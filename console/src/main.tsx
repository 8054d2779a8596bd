/** The console's entry: renders the app into `#app`, which the page served at `{base_url}/console` holds. */
import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
