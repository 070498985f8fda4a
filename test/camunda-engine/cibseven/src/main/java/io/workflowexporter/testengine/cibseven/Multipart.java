package io.workflowexporter.testengine.cibseven;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A minimal multipart/form-data reader for POST /deployment/create (RFC 7578, no nesting). */
final class Multipart {

  private Multipart() {
  }

  /** One part: its form field name, its file name (null for a plain field) and its bytes. */
  static final class Part {
    final String name;
    final String filename;
    final byte[] data;

    Part(String name, String filename, byte[] data) {
      this.name = name;
      this.filename = filename;
      this.data = data;
    }
  }

  private static final Pattern BOUNDARY = Pattern.compile("boundary=(?:\"([^\"]+)\"|([^;\\s]+))");
  private static final Pattern NAME = Pattern.compile("[;\\s]name=\"([^\"]*)\"");
  private static final Pattern FILENAME = Pattern.compile("filename=\"([^\"]*)\"");

  static List<Part> parse(String contentType, byte[] body) {
    if (contentType == null || !contentType.toLowerCase().startsWith("multipart/form-data")) {
      throw new Routes.HttpError(400, "InvalidRequestException", "POST /deployment/create needs multipart/form-data, got " + contentType);
    }
    Matcher bm = BOUNDARY.matcher(contentType);
    if (!bm.find()) {
      throw new Routes.HttpError(400, "InvalidRequestException", "multipart/form-data without a boundary");
    }
    byte[] delim = ("--" + (bm.group(1) != null ? bm.group(1) : bm.group(2))).getBytes(StandardCharsets.ISO_8859_1);
    List<Part> parts = new ArrayList<>();
    int pos = indexOf(body, delim, 0);
    while (pos >= 0) {
      int start = pos + delim.length;
      if (start + 1 < body.length && body[start] == '-' && body[start + 1] == '-') {
        break; // the closing delimiter
      }
      start = skipCrlf(body, start);
      int next = indexOf(body, delim, start);
      if (next < 0) {
        break;
      }
      int end = next;
      if (end >= 2 && body[end - 2] == '\r' && body[end - 1] == '\n') {
        end -= 2;
      }
      byte[] crlf2 = {'\r', '\n', '\r', '\n'};
      int headersEnd = indexOf(body, crlf2, start);
      if (headersEnd < 0 || headersEnd > end) {
        throw new Routes.HttpError(400, "InvalidRequestException", "a multipart part without headers");
      }
      String headers = new String(body, start, headersEnd - start, StandardCharsets.UTF_8);
      String name = null, filename = null;
      for (String h : headers.split("\r\n")) {
        if (h.toLowerCase().startsWith("content-disposition:")) {
          Matcher n = NAME.matcher(h);
          if (n.find()) {
            name = n.group(1);
          }
          Matcher f = FILENAME.matcher(h);
          if (f.find()) {
            filename = f.group(1);
          }
        }
      }
      parts.add(new Part(name, filename, Arrays.copyOfRange(body, headersEnd + 4, end)));
      pos = next;
    }
    return parts;
  }

  private static int skipCrlf(byte[] b, int i) {
    if (i + 1 < b.length && b[i] == '\r' && b[i + 1] == '\n') {
      return i + 2;
    }
    return i;
  }

  private static int indexOf(byte[] hay, byte[] needle, int from) {
    outer:
    for (int i = from; i <= hay.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
