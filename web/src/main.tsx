/** Entry point: styles, router, app. */
import './styles.css';
import { render } from 'preact';
import { installRouter } from './lib/router.js';
import { App } from './app.js';

installRouter();
render(<App />, document.getElementById('app')!);
