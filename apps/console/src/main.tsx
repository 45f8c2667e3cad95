import { render } from 'preact';
import './styles.css';

function App() {
  return (
    <main>
      <h1>Hallmark console</h1>
    </main>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
