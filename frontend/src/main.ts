import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { startTheme } from './lib/theme';

startTheme();

const target = document.getElementById('app');
if (!target) throw new Error('hark: #app missing from index.html');

export default mount(App, { target });
