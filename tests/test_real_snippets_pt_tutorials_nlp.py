"""Programs in the style of pytorch/tutorials' beginner NLP series (autograd in
nlp/pytorch_tutorial, the BiLSTM-CRF of nlp/advanced_tutorial) and the nn.Transformer
language model of beginner/transformer_tutorial, run with torch and with tapegrad; what
they print must agree (tests/_snippets.py). Weights are set from deterministic formulas,
data sets are small literals. Written for these tests, not copied.
"""
import math

import pytest
import torch

import tapegrad as tg

from _snippets import assert_same_output, fill_parameters_float32


def test_nlp_pytorch_tutorial_grad_fn_and_variable():
    def program(torch, print):
        autograd = torch.autograd
        x = torch.tensor([1., 2., 3], requires_grad=True)
        y = torch.tensor([4., 5., 6], requires_grad=True)
        z = x + y
        print(z.grad_fn)
        s = z.sum()
        print(s, s.grad_fn)
        s.backward()
        print(x.grad)
        v = autograd.Variable(torch.Tensor([1., 2., 3]), requires_grad=True)
        print(v.data, (v * 2).sum().grad_fn, autograd.Variable(v.data).grad_fn)
        print((x.detach() * 2).grad_fn, (x ** 2).grad_fn, x.view(3, 1).grad_fn)
        print(torch.cat([x, y]).grad_fn, x[1:].grad_fn, x.exp().mean().grad_fn)

    assert_same_output(program)


def test_nlp_cat_error_starts_with_torchs_sentence():
    for f in (lambda L: L.cat([L.ones(2, 5), L.ones(3, 5), L.ones(2, 3)]),
              lambda L: L.cat([L.ones(2, 5), L.ones(2, 3)]),
              lambda L: L.cat([L.ones(2, 5), L.ones(3)])):
        with pytest.raises(RuntimeError) as want:
            f(torch)
        with pytest.raises(RuntimeError) as got:
            f(tg)
        assert str(got.value).startswith(str(want.value) + " ("), (str(got.value), str(want.value))


# ------------------------------------------------ beginner/nlp/advanced_tutorial: BiLSTM-CRF
def test_bilstm_crf_neg_log_likelihood_and_viterbi():
    def program(torch, print):
        nn = torch.nn
        START_TAG, STOP_TAG = "<START>", "<STOP>"

        def argmax(vec):
            _, idx = torch.max(vec, 1)
            return idx.item()

        def log_sum_exp(vec):
            max_score = vec[0, argmax(vec)]
            max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
            return max_score + torch.log(torch.sum(torch.exp(vec - max_score_broadcast)))

        class BiLSTM_CRF(nn.Module):
            def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
                super().__init__()
                self.hidden_dim = hidden_dim
                self.tag_to_ix = tag_to_ix
                self.tagset_size = len(tag_to_ix)
                self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
                self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1,
                                    bidirectional=True)
                self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
                self.transitions = nn.Parameter(torch.randn(self.tagset_size, self.tagset_size))

            def init_hidden(self):
                return (torch.full((2, 1, self.hidden_dim // 2), 0.1),
                        torch.full((2, 1, self.hidden_dim // 2), -0.1))

            def _forward_alg(self, feats):
                init_alphas = torch.full((1, self.tagset_size), -10000.)
                init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
                forward_var = init_alphas
                for feat in feats:
                    alphas_t = []
                    for next_tag in range(self.tagset_size):
                        emit_score = feat[next_tag].view(1, -1).expand(1, self.tagset_size)
                        trans_score = self.transitions[next_tag].view(1, -1)
                        next_tag_var = forward_var + trans_score + emit_score
                        alphas_t.append(log_sum_exp(next_tag_var).view(1))
                    forward_var = torch.cat(alphas_t).view(1, -1)
                terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
                return log_sum_exp(terminal_var)

            def _get_lstm_features(self, sentence):
                embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
                lstm_out, self.hidden = self.lstm(embeds, self.init_hidden())
                return self.hidden2tag(lstm_out.view(len(sentence), self.hidden_dim))

            def _score_sentence(self, feats, tags):
                score = torch.zeros(1)
                tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], dtype=torch.long), tags])
                for i, feat in enumerate(feats):
                    score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
                return score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]

            def _viterbi_decode(self, feats):
                backpointers = []
                init_vvars = torch.full((1, self.tagset_size), -10000.)
                init_vvars[0][self.tag_to_ix[START_TAG]] = 0
                forward_var = init_vvars
                for feat in feats:
                    bptrs_t, viterbivars_t = [], []
                    for next_tag in range(self.tagset_size):
                        next_tag_var = forward_var + self.transitions[next_tag]
                        best_tag_id = argmax(next_tag_var)
                        bptrs_t.append(best_tag_id)
                        viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
                    forward_var = (torch.cat(viterbivars_t) + feat).view(1, -1)
                    backpointers.append(bptrs_t)
                terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
                best_tag_id = argmax(terminal_var)
                path_score = terminal_var[0][best_tag_id]
                best_path = [best_tag_id]
                for bptrs_t in reversed(backpointers):
                    best_tag_id = bptrs_t[best_tag_id]
                    best_path.append(best_tag_id)
                start = best_path.pop()
                assert start == self.tag_to_ix[START_TAG]
                best_path.reverse()
                return path_score, best_path

            def neg_log_likelihood(self, sentence, tags):
                feats = self._get_lstm_features(sentence)
                return self._forward_alg(feats) - self._score_sentence(feats, tags)

            def forward(self, sentence):
                return self._viterbi_decode(self._get_lstm_features(sentence))

        training_data = [("the wall street journal reported today".split(), "B I I I O O".split()),
                         ("georgia tech is a university".split(), "B I O O O".split())]
        word_to_ix = {}
        for sentence, tags in training_data:
            for word in sentence:
                word_to_ix.setdefault(word, len(word_to_ix))
        tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
        model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, 5, 4)
        fill_parameters_float32(torch, model, 0.5)
        model.transitions.data[tag_to_ix[START_TAG], :] = -10000
        model.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
        seq = lambda s, ix: torch.tensor([ix[w] for w in s], dtype=torch.long)
        with torch.no_grad():
            print(model(seq(training_data[0][0], word_to_ix)))
        for epoch in range(3):
            for sentence, tags in training_data:
                model.zero_grad()
                loss = model.neg_log_likelihood(seq(sentence, word_to_ix), seq(tags, tag_to_ix))
                loss.backward()
                optimizer.step()
            print(loss, model.transitions.grad[0])
        with torch.no_grad():
            print(model(seq(training_data[0][0], word_to_ix)))

    assert_same_output(program, rtol=2e-4, atol=1e-5)


# ------------------------------------------------ beginner/transformer_tutorial (no torchtext)
def test_transformer_encoder_language_model_steps():
    def program(torch, print):
        nn = torch.nn

        class PositionalEncoding(nn.Module):
            def __init__(self, d_model, dropout=0.1, max_len=50):
                super().__init__()
                self.dropout = nn.Dropout(p=dropout)
                position = torch.arange(max_len).unsqueeze(1)
                div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
                pe = torch.zeros(max_len, 1, d_model)
                pe[:, 0, 0::2] = torch.sin(position * div_term)
                pe[:, 0, 1::2] = torch.cos(position * div_term)
                self.register_buffer('pe', pe)

            def forward(self, x):
                return self.dropout(x + self.pe[:x.size(0)])

        class TransformerModel(nn.Module):
            def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.0):
                super().__init__()
                self.pos_encoder = PositionalEncoding(d_model, dropout)
                layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
                self.transformer_encoder = nn.TransformerEncoder(layer, nlayers,
                                                                 enable_nested_tensor=False)
                self.embedding = nn.Embedding(ntoken, d_model)
                self.d_model = d_model
                self.linear = nn.Linear(d_model, ntoken)

            def forward(self, src, src_mask=None):
                src = self.pos_encoder(self.embedding(src) * math.sqrt(self.d_model))
                if src_mask is None:
                    src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
                return self.linear(self.transformer_encoder(src, src_mask))

        def batchify(data, bsz):
            seq_len = data.size(0) // bsz
            return data[:seq_len * bsz].view(bsz, seq_len).t().contiguous()

        ntokens = 11
        data = torch.tensor([(i * 7 + 3) % ntokens for i in range(64)], dtype=torch.long)
        train_data = batchify(data, 4)
        model = TransformerModel(ntokens, 8, 2, 16, 2)
        fill_parameters_float32(torch, model, 0.3)
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
        bptt = 5
        for epoch in range(2):
            model.train()
            for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
                seq_len = min(bptt, len(train_data) - 1 - i)
                src, targets = train_data[i:i + seq_len], train_data[i + 1:i + 1 + seq_len].reshape(-1)
                output = model(src)
                loss = criterion(output.view(-1, ntokens), targets)
                optimizer.zero_grad()
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                optimizer.step()
            print(f'| epoch {epoch:3d} | lr {scheduler.get_last_lr()[0]:02.2f} | '
                  f'loss {loss.item():5.4f} | ppl {math.exp(loss.item()):8.3f} | norm {norm:.4f}')
            scheduler.step()
        model.eval()
        with torch.no_grad():
            print(model(train_data[:4]).argmax(-1))

    assert_same_output(program, rtol=5e-4, atol=1e-5)
