"""Programs in the style of more pytorch/tutorials scripts (intermediate char-RNN
classification and generation, seq2seq translation, the nn.Transformer language model,
introyt autograd/models/training, FGSM, the beginner NLP series with the BiLSTM-CRF,
recipes on state_dict and checkpoints), run with torch and with tapegrad; what they
print must agree (tests/_snippets.py). Weights are set from deterministic formulas
(the two libraries draw different random numbers), data sets are small literals.
Written for these tests, not copied.
"""
import importlib
import math

import numpy as np
import pytest
import torch

import tapegrad as tg
from _snippets import assert_same_output


def _fill(torch, model, scale=0.1):
    """Every parameter from a fixed formula, so both libraries start from the same weights."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.7 + k) * scale).view(p.shape))


# ------------------------------------------------ introyt/autogradyt: walking grad_fn
def test_autogradyt_grad_fn_chain_prints_like_torch():
    def program(torch, print):
        a = torch.linspace(0., 2. * math.pi, steps=5, requires_grad=True)
        b = torch.sin(a)
        c = 2 * b
        d = c + 1
        out = d.sum()
        print(out.grad_fn)
        print(d.grad_fn)
        print(d.grad_fn.next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
        acc = d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
        print(acc.next_functions, type(acc).__name__, acc.variable is a, acc.name())
        print(c.grad_fn, b.grad_fn, a.grad_fn)
        print(str(b.grad_fn).split(" ")[0])
        out.backward()
        print(a.grad)

    assert_same_output(program)


def test_accumulate_grad_of_the_same_leaf_compares_equal():
    w = tg.ones(3, requires_grad=True)
    y = w * w
    (f1, _), (f2, _) = y.grad_fn.next_functions
    assert f1 == f2 and hash(f1) == hash(f2) and f1.variable is w
    assert y.grad_fn.next_functions[0][0] in {f2}
    x = tg.ones(3, requires_grad=True)
    assert (x * w).grad_fn.next_functions[0][0] != f1


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


# ------------------------------------------------ introyt/modelsyt: import torch.functional
def test_torch_functional_module_holds_the_top_level_functions():
    F = importlib.import_module("tapegrad.functional")
    TF = importlib.import_module("torch.functional")
    for name in F.__all__:
        assert getattr(F, name) is getattr(tg, name), name
        assert name in TF.__all__, name
    assert_same_output(lambda torch, print: print(
        torch.functional.split(torch.arange(5), 2), torch.functional.einsum("i,i->", torch.ones(3), torch.ones(3))))


# ------------------------------------------------ recipes: warmstarting (strict=False)
def test_warmstarting_load_state_dict_result_prints_like_torch():
    def program(torch, print):
        nn = torch.nn

        class NetA(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 6, 5)
                self.fc1 = nn.Linear(4, 2)

        class NetC(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 6, 5)
                self.extra = nn.Linear(2, 2)

        sd = NetA().state_dict()
        res = NetC().load_state_dict(sd, strict=False)
        print(res)
        print(res.missing_keys, res.unexpected_keys, type(res).__name__)
        print(NetA().load_state_dict(sd, strict=False))
        print(NetA().load_state_dict(sd))
        try:
            NetC().load_state_dict(sd)
        except RuntimeError as e:
            print("RuntimeError:", e)

    assert_same_output(program)


# ------------------------------------------------ intermediate/char_rnn_classification
def test_char_rnn_classification_nn_rnn_training_steps():
    def program(torch, print):
        import string
        nn = torch.nn
        letters = string.ascii_letters + " .,;'" + "_"

        def lineToTensor(line):
            tensor = torch.zeros(len(line), 1, len(letters))
            for li, letter in enumerate(line):
                tensor[li][0][letters.find(letter)] = 1
            return tensor

        class CharRNN(nn.Module):
            def __init__(self, input_size, hidden_size, output_size):
                super().__init__()
                self.rnn = nn.RNN(input_size, hidden_size)
                self.h2o = nn.Linear(hidden_size, output_size)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, line_tensor):
                rnn_out, hidden = self.rnn(line_tensor)
                return self.softmax(self.h2o(hidden[0]))

        data = [("Abe", 0), ("Schmidt", 1), ("Rossi", 2), ("Nowak", 1), ("Sato", 0), ("Bianchi", 2)]
        rnn = CharRNN(len(letters), 16, 3)
        _fill(torch, rnn, 0.2)
        print(rnn)
        out = rnn(lineToTensor("Albert"))
        top_n, top_i = out.topk(1)
        print(out, top_i[0].item())
        optimizer = torch.optim.SGD(rnn.parameters(), lr=0.15)
        criterion = nn.NLLLoss()
        rnn.train()
        for epoch in range(3):
            batch_loss = 0
            for name, label in data:
                loss = criterion(rnn(lineToTensor(name)), torch.tensor([label], dtype=torch.long))
                batch_loss += loss
            batch_loss.backward()
            print(nn.utils.clip_grad_norm_(rnn.parameters(), 3))
            optimizer.step()
            optimizer.zero_grad()
            print(f"{epoch} average batch loss = {batch_loss.item() / len(data):.5f}")
        confusion = torch.zeros(3, 3)
        rnn.eval()
        with torch.no_grad():
            for name, label in data:
                guess_i = rnn(lineToTensor(name)).topk(1)[1][0].item()
                confusion[label][guess_i] += 1
        for i in range(3):
            denom = confusion[i].sum()
            if denom > 0:
                confusion[i] = confusion[i] / denom
        print(confusion)

    assert_same_output(program, rtol=2e-4)


# ------------------------------------------------ intermediate/char_rnn_generation
def test_char_rnn_generation_hand_written_rnn_and_sampling():
    def program(torch, print):
        nn = torch.nn
        n_categories, n_letters = 3, 8

        class RNN(nn.Module):
            def __init__(self, input_size, hidden_size, output_size):
                super().__init__()
                self.hidden_size = hidden_size
                self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
                self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
                self.o2o = nn.Linear(hidden_size + output_size, output_size)
                self.dropout = nn.Dropout(0.1)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, category, input, hidden):
                input_combined = torch.cat((category, input, hidden), 1)
                hidden = self.i2h(input_combined)
                output = self.i2o(input_combined)
                output = self.o2o(torch.cat((hidden, output), 1))
                return self.softmax(self.dropout(output)), hidden

        rnn = RNN(n_letters, 12, n_letters)
        _fill(torch, rnn, 0.3)
        rnn.dropout.p = 0.0  # no random draws: both libraries see the same numbers
        category = torch.zeros(1, n_categories)
        category[0][1] = 1
        line = [2, 5, 1, 3]
        inp = torch.zeros(len(line), 1, n_letters)
        for li, c in enumerate(line):
            inp[li][0][c] = 1
        target = torch.LongTensor(line[1:] + [n_letters - 1])
        target.unsqueeze_(-1)
        criterion = nn.NLLLoss()
        for step in range(3):
            hidden = torch.zeros(1, 12)
            rnn.zero_grad()
            loss = torch.Tensor([0])
            for i in range(inp.size(0)):
                output, hidden = rnn(category, inp[i], hidden)
                loss += criterion(output, target[i])
            loss.backward()
            for p in rnn.parameters():
                p.data.add_(p.grad.data, alpha=-0.05)
            print(loss.item() / inp.size(0), loss.grad_fn)
        with torch.no_grad():
            hidden = torch.zeros(1, 12)
            x = inp[0]
            name = [2]
            for i in range(6):
                output, hidden = rnn(category, x, hidden)
                topv, topi = output.topk(1)
                topi = topi[0][0]
                if topi == n_letters - 1:
                    break
                name.append(int(topi))
                x = torch.zeros(1, n_letters)
                x[0][topi] = 1
            print(name, topv)

    assert_same_output(program)


# ------------------------------------------------ intermediate/seq2seq_translation
def test_seq2seq_gru_encoder_attention_decoder_training():
    def program(torch, print):
        nn = torch.nn
        F = torch.nn.functional
        data_ = torch.utils.data
        TensorDataset, DataLoader, SequentialSampler = (data_.TensorDataset, data_.DataLoader,
                                                        data_.SequentialSampler)
        MAX_LENGTH, SOS_token, EOS_token, H = 5, 0, 1, 8

        class EncoderRNN(nn.Module):
            def __init__(self, input_size, hidden_size):
                super().__init__()
                self.embedding = nn.Embedding(input_size, hidden_size)
                self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
                self.dropout = nn.Dropout(0.0)

            def forward(self, input):
                return self.gru(self.dropout(self.embedding(input)))

        class BahdanauAttention(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
                self.Wa = nn.Linear(hidden_size, hidden_size)
                self.Ua = nn.Linear(hidden_size, hidden_size)
                self.Va = nn.Linear(hidden_size, 1)

            def forward(self, query, keys):
                scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
                scores = scores.squeeze(2).unsqueeze(1)
                weights = F.softmax(scores, dim=-1)
                return torch.bmm(weights, keys), weights

        class AttnDecoderRNN(nn.Module):
            def __init__(self, hidden_size, output_size):
                super().__init__()
                self.embedding = nn.Embedding(output_size, hidden_size)
                self.attention = BahdanauAttention(hidden_size)
                self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
                self.out = nn.Linear(hidden_size, output_size)

            def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
                batch_size = encoder_outputs.size(0)
                decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
                decoder_hidden = encoder_hidden
                outs, attns = [], []
                for i in range(MAX_LENGTH):
                    embedded = self.embedding(decoder_input)
                    query = decoder_hidden.permute(1, 0, 2)
                    context, attn = self.attention(query, encoder_outputs)
                    output, decoder_hidden = self.gru(torch.cat((embedded, context), dim=2),
                                                      decoder_hidden)
                    output = self.out(output)
                    outs.append(output)
                    attns.append(attn)
                    if target_tensor is not None:
                        decoder_input = target_tensor[:, i].unsqueeze(1)
                    else:
                        _, topi = output.topk(1)
                        decoder_input = topi.squeeze(-1).detach()
                outs = F.log_softmax(torch.cat(outs, dim=1), dim=-1)
                return outs, decoder_hidden, torch.cat(attns, dim=1)

        pairs = np.array([[2, 3, 4, 1, 0], [5, 2, 1, 0, 0], [3, 3, 6, 2, 1], [4, 1, 0, 0, 0]])
        targets = np.array([[2, 4, 1, 0, 0], [3, 5, 6, 1, 0], [6, 1, 0, 0, 0], [2, 2, 3, 4, 1]])
        data = TensorDataset(torch.LongTensor(pairs.astype(np.int32)),
                             torch.LongTensor(targets.astype(np.int32)))
        loader = DataLoader(data, sampler=SequentialSampler(data), batch_size=2)
        encoder, decoder = EncoderRNN(7, H), AttnDecoderRNN(H, 7)
        _fill(torch, encoder, 0.3)
        _fill(torch, decoder, 0.3)
        enc_opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
        dec_opt = torch.optim.Adam(decoder.parameters(), lr=0.01)
        criterion = nn.NLLLoss()
        for epoch in range(3):
            total = 0
            for input_tensor, target_tensor in loader:
                enc_opt.zero_grad()
                dec_opt.zero_grad()
                encoder_outputs, encoder_hidden = encoder(input_tensor)
                decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
                loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)),
                                 target_tensor.view(-1))
                loss.backward()
                enc_opt.step()
                dec_opt.step()
                total += loss.item()
            print("%.5f" % (total / len(loader)))
        with torch.no_grad():
            eo, eh = encoder(torch.tensor([2, 3, 1], dtype=torch.long).view(1, -1))
            out, _, attn = decoder(eo, eh)
            _, topi = out.topk(1)
            print(topi.squeeze(), attn.shape, attn.sum(-1))

    assert_same_output(program, rtol=2e-4, atol=1e-5)


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
        _fill(torch, model, 0.5)
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
        _fill(torch, model, 0.3)
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
