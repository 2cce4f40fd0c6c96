import { sendCommits } from './send-commits';

describe('sendCommits', () => {
  it('sends, in order, the frames the flow says follow an append, and nothing after the others', () => {
    const sent: string[] = [];
    const stage = sendCommits({ afterAppend: (seq) => (seq === 4 ? ['commit', 'response.create'] : null) }, (f) => sent.push(f));
    for (const seq of [0, 1, 2, 3, 4, 5]) stage({ seq });
    expect(sent).toEqual(['commit', 'response.create']);
  });
});
