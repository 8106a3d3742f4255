"""torch.utils.tensorboard.writer: SummaryWriter and FileWriter with torch's API.

SummaryWriter is tensorboardX's SummaryWriter (which writes the event files) with
torch's constructor and method signatures. Every method that takes tensors hands
tensorboardX NumPy arrays of their values (`_summary.py`), and where tensorboardX's
summary differs from torch's (tags, pixel clipping, add_scalars' directories, hparams,
audio) the method builds torch's. Methods that take no tensors (add_text, add_figure,
add_custom_scalars*, flush, close) are tensorboardX's, which match torch's. Known
differences: add_mesh's parts are tagged NAME_1/2/3 with tensorboardX's plugin metadata
(torch: NAME_VERTEX/FACE/COLOR), add_embedding wants square label images, add_graph is
refused (it traces with torch.jit).
"""
import itertools
import math
import os
import time

import numpy as np

import tensorboardX
from tensorboardX import summary as _tbx
from tensorboardX.proto.event_pb2 import Event, SessionLog

from . import _summary as S

__all__ = ["FileWriter", "SummaryWriter"]

_writers_opened = itertools.count()


class FileWriter(tensorboardX.FileWriter):
    """Writes Event protocol buffers to an event file in `log_dir` (torch's argument names)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        # torch's file name events.out.tfevents.TIME.HOST.PID.N: tensorboardX's stops at
        # HOST, so two writers opened on one directory within a second (a writer reopened
        # after close, a second writer) would overwrite each other's file
        super().__init__(log_dir, max_queue, flush_secs,
                         f".{os.getpid()}.{next(_writers_opened)}{filename_suffix}")


class SummaryWriter(tensorboardX.SummaryWriter):
    """Writes TensorBoard event files in `log_dir` (default runs/DATE_TIME_HOST+comment)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        super().__init__(logdir=log_dir, comment=comment, purge_step=purge_step,
                         max_queue=max_queue, flush_secs=flush_secs,
                         filename_suffix=filename_suffix)
        # torch's attribute names (tensorboardX keeps its own copies under other names)
        self.log_dir = self.logdir
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix

    def _get_file_writer(self):
        # tensorboardX's, with our FileWriter (torch's file names) and torch's purge rule:
        # the purge events go into the first event file only, not again on reopening
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.logdir, self._max_queue, self._flush_secs,
                                          self._filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """Return the directory where event files will be written."""
        return self.log_dir

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = S.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            for summary in (exp, ssi, sei):
                w_hp.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        summary = S.scalar(tag, scalar_value, new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        # torch's layout: one run directory per key, LOGDIR/MAINTAG_KEY with the main tag's
        # slashes made underscores (tensorboardX nests LOGDIR/MAINTAG/KEY)
        walltime = time.time() if walltime is None else walltime
        fw_logdir = str(self._get_file_writer().get_logdir())
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(S.scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        self._get_file_writer().add_summary(S.tensor(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        summary = _tbx.histogram(tag, S.to_numpy(values), S.to_numpy(bins), max_bins=max_bins)
        self._get_file_writer().add_summary(S.keep_tag(summary, tag), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = _tbx.histogram_raw(tag, *map(S.plain, (min, max, num, sum, sum_squares,
                                                         bucket_limits, bucket_counts)))
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        summary = _tbx.image(tag, S.uint8_pixels(img_tensor), dataformats=dataformats)
        self._get_file_writer().add_summary(S.keep_tag(summary, tag), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        summary = _tbx.image(tag, S.uint8_pixels(img_tensor), dataformats=dataformats)
        self._get_file_writer().add_summary(S.keep_tag(summary, tag), global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        summary = _tbx.image_boxes(tag, S.uint8_pixels(img_tensor), S.to_numpy(box_tensor),
                                   rescale=rescale, dataformats=dataformats, labels=labels)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        summary = _tbx.video(tag, S.video_frames(vid_tensor), fps)
        self._get_file_writer().add_summary(S.keep_tag(summary, tag), global_step, walltime)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        summary = S.audio(tag, snd_tensor, sample_rate=sample_rate)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_onnx_graph(self, prototxt):
        super().add_onnx_graph(prototxt)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        raise NotImplementedError(
            "SummaryWriter.add_graph traces the model with torch.jit, which tapegrad does not "
            "have; tapegrad.viz.draw(loss) pictures the autograd graph instead")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        label_img = S.to_numpy(label_img)
        super().add_embedding(S.to_numpy(mat), metadata, label_img, global_step, tag,
                              metadata_header)
        if label_img is not None:
            self._write_sprite(label_img, global_step, tag)

    def _write_sprite(self, label_img, global_step, tag):
        """sprite.png again, as torch writes it: tensorboardX pads the square's unused
        bottom rows with uninitialized memory (`np.ndarray(...)`: random pixels), torch
        with zeros. The images laid out by tensorboardX's own make_grid, ceil(sqrt(N)) a
        row; written atomically."""
        from PIL import Image
        from tensorboardX.utils import make_grid
        grid = make_grid(label_img, ncols=math.ceil(label_img.shape[0] ** 0.5))  # (C, H, W)
        square = np.zeros((grid.shape[2], grid.shape[2], 3))
        square[:grid.shape[1]] = grid.transpose(1, 2, 0)
        path = os.path.join(self._get_file_writer().get_logdir(),
                            str(0 if global_step is None else global_step).zfill(5),
                            self._encode(tag), "sprite.png")
        Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(path + ".tmp", format="PNG")
        os.replace(path + ".tmp", path)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        super().add_pr_curve(tag, S.to_numpy(labels), S.to_numpy(predictions), global_step,
                             num_thresholds, S.to_numpy(weights), walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        super().add_pr_curve_raw(
            tag, S.to_numpy(true_positive_counts), S.to_numpy(false_positive_counts),
            S.to_numpy(true_negative_counts), S.to_numpy(false_negative_counts),
            S.to_numpy(precision), S.to_numpy(recall), global_step, num_thresholds,
            S.to_numpy(weights), walltime)

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        super().add_mesh(tag, S.to_numpy(vertices), S.to_numpy(colors), S.to_numpy(faces),
                         config_dict, global_step, walltime)
