use smb_msg::*;

use super::CryptoError;

type SigningKey = [u8; 16];

pub fn make_signing_algo(
    signing_algorithm: SigningAlgorithmId,
    signing_key: &SigningKey,
) -> Result<Box<dyn SigningAlgo>, CryptoError> {
    if !SIGNING_ALGOS.contains(&signing_algorithm) {
        return Err(CryptoError::UnsupportedSigningAlgorithm(signing_algorithm));
    }
    if cfg!(feature = "__debug-dump-keys") {
        log::debug!(
            "Using signing algorithm {:?} with key {:02x?}",
            signing_algorithm,
            signing_key
        );
    }
    match signing_algorithm {
        #[cfg(feature = "sign_hmac")]
        SigningAlgorithmId::HmacSha256 => Ok(hmac_signer::HmacSha256Signer::build(signing_key)),
        #[cfg(feature = "sign_cmac")]
        SigningAlgorithmId::AesCmac => Ok(cmac_signer::Cmac128Signer::build(signing_key)?),
        #[cfg(feature = "sign_gmac")]
        SigningAlgorithmId::AesGmac => Ok(gmac_signer::Gmac128Signer::build(signing_key)),
        #[cfg(not(all(feature = "sign_cmac", feature = "sign_gmac", feature = "sign_hmac")))]
        _ => Err(CryptoError::UnsupportedSigningAlgorithm(signing_algorithm)),
    }
}

pub const SIGNING_ALGOS: &[SigningAlgorithmId] = &[
    #[cfg(feature = "sign_hmac")]
    SigningAlgorithmId::HmacSha256,
    #[cfg(feature = "sign_cmac")]
    SigningAlgorithmId::AesCmac,
    #[cfg(feature = "sign_gmac")]
    SigningAlgorithmId::AesGmac,
];

/// A trait for SMB signing algorithms.
pub trait SigningAlgo: std::fmt::Debug + Send + Sync {
    /// Start a new signing session. This is called before any data is passed to the signer,
    /// and [SigningAlgo::update] must feed the header data to the signer, in addition to this call.
    ///
    /// An algorithm may implement this function to perform any necessary initialization,
    /// that requires the header data.
    /// This function must be called once per signing session.
    fn start(&mut self, _header: &Header) {
        // Default implementation does nothing.
    }

    /// Update the signing session with new data.
    fn update(&mut self, data: &[u8]);

    /// Finalize the signing session and return the signature.
    ///
    /// This function must be called once per signing session.
    fn finalize(&mut self) -> u128;

    /// ioscope patch: whether [SigningAlgo::sign_whole] can sign a message that is
    /// whole in memory faster than [SigningAlgo::update] can stream it.
    fn signs_whole(&self) -> bool {
        false
    }

    /// ioscope patch: the signature of `message` (its header first, the header's
    /// signature zeroed), in one call; `None` when [SigningAlgo::signs_whole] is false.
    fn sign_whole(&mut self, _header: &Header, _message: &[u8]) -> Option<u128> {
        None
    }

    /// Clone the algo into a boxed trait object.
    /// See [EncryptionAlgo::clone_box](super::encryption::EncryptingAlgo::clone_box) for more information.
    fn clone_box(&self) -> Box<dyn SigningAlgo>;
}

#[cfg(feature = "sign_hmac")]
mod hmac_signer {
    use hmac::{Hmac, KeyInit, Mac};
    use sha2::Sha256;

    use super::*;

    type HmacSha256 = Hmac<Sha256>;

    #[derive(Debug, Clone)]
    pub struct HmacSha256Signer {
        hmac: Option<HmacSha256>,
    }

    impl HmacSha256Signer {
        pub fn build(signing_key: &SigningKey) -> Box<dyn SigningAlgo> {
            Box::new(HmacSha256Signer {
                hmac: Some(HmacSha256::new_from_slice(signing_key).unwrap()),
            })
        }
    }

    impl SigningAlgo for HmacSha256Signer {
        fn update(&mut self, data: &[u8]) {
            self.hmac.as_mut().unwrap().update(data);
        }

        fn finalize(&mut self) -> u128 {
            let result = self.hmac.take().unwrap().finalize().into_bytes();
            u128::from_le_bytes(result[0..16].try_into().unwrap())
        }

        fn clone_box(&self) -> Box<dyn SigningAlgo> {
            Box::new(self.clone())
        }
    }
}

#[cfg(feature = "sign_cmac")]
mod cmac_signer {
    use super::*;
    use aes::Aes128;
    use cmac::{Cmac, KeyInit};
    use hmac::Mac;

    #[derive(Debug, Clone)]
    pub struct Cmac128Signer {
        cmac: Option<Cmac<Aes128>>,
    }

    impl Cmac128Signer {
        pub fn build(signing_key: &SigningKey) -> Result<Box<dyn SigningAlgo>, CryptoError> {
            Ok(Box::new(Cmac128Signer {
                cmac: Some(Cmac::new_from_slice(signing_key)?),
            }))
        }
    }

    impl SigningAlgo for Cmac128Signer {
        fn update(&mut self, data: &[u8]) {
            self.cmac.as_mut().unwrap().update(data);
        }

        fn finalize(&mut self) -> u128 {
            u128::from_le_bytes(self.cmac.take().unwrap().finalize().into_bytes().into())
        }

        fn clone_box(&self) -> Box<dyn SigningAlgo> {
            Box::new(self.clone())
        }
    }
}

#[cfg(feature = "sign_gmac")]
mod gmac_signer {
    //! AES-GMAC signing (SMB 3.1.1), streamed. ioscope patch: the crate's own version
    //! buffered the whole message (a second copy of every READ response, allocated
    //! per message) because RustCrypto's AES-GCM has no incremental interface; this one
    //! feeds GHASH as the data arrives. GMAC is AES-GCM with the message as
    //! associated data and no plaintext (NIST SP 800-38D): the tag is
    //! GHASH_H(A || pad || len(A) || 0) XOR E_K(J0), with H = E_K(0^128) and
    //! J0 = nonce || 0^31 || 1 for the 96-bit nonce.
    use aes::Aes128;
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    use ghash::GHash;
    use ghash::universal_hash::UniversalHash;
    use modular_bitfield::prelude::*;

    use super::*;

    type Gmac128Nonce = [u8; 12];

    #[derive(Clone)]
    pub struct Gmac128Signer {
        cipher: Aes128,
        /// graviola's AES-GCM under the same key, where this CPU runs it: a whole
        /// message's tag at about 20 GB/s on a VAES/VPCLMULQDQ core, against 2–3 GB/s
        /// for the ghash crate's streamed GHASH (docs/benchmarks.md, session 24).
        whole: Option<std::sync::Arc<whole::Gcm>>,
        /// GHASH keyed with H, before any data: each message starts from a copy.
        ghash_init: GHash,
        ghash: GHash,
        nonce: Option<Gmac128Nonce>,
        /// Bytes of a block not yet complete.
        partial: [u8; 16],
        partial_len: usize,
        /// Bytes fed so far (the associated data's length).
        len_bytes: u64,
    }

    #[allow(dead_code)]
    mod gmac_nonce {
        use super::*;
        #[bitfield]
        pub struct NonceSuffixFlags {
            #[skip(getters)]
            pub msg_id: B64,
            #[skip(getters)]
            pub is_server: bool,
            #[skip(getters)]
            pub is_cancel: bool,
            #[skip]
            __: B30,
        }
    }

    impl Gmac128Signer {
        pub fn build(key: &SigningKey) -> Box<dyn SigningAlgo> {
            Box::new(Self::new(key))
        }

        fn new(key: &SigningKey) -> Self {
            let cipher = Aes128::new(&(*key).into());
            let mut h = ghash::Block::default();
            cipher.encrypt_block(&mut h);
            let ghash = GHash::new(&h);
            Gmac128Signer {
                cipher,
                whole: whole::Gcm::new(key).map(std::sync::Arc::new),
                ghash_init: ghash.clone(),
                ghash,
                nonce: None,
                partial: [0; 16],
                partial_len: 0,
                len_bytes: 0,
            }
        }

        fn make_nonce(header: &Header) -> Gmac128Nonce {
            debug_assert!(header.message_id > 0 && header.message_id != u64::MAX);

            gmac_nonce::NonceSuffixFlags::new()
                .with_msg_id(header.message_id)
                .with_is_cancel(header.command == Command::Cancel)
                .with_is_server(header.flags.server_to_redir())
                .into_bytes()
        }
    }

    impl super::SigningAlgo for Gmac128Signer {
        fn start(&mut self, header: &Header) {
            // The nonce is derived from the message ID.
            self.nonce = Some(Self::make_nonce(header));
            self.ghash = self.ghash_init.clone();
            self.partial_len = 0;
            self.len_bytes = 0;
        }

        fn update(&mut self, mut data: &[u8]) {
            debug_assert!(self.nonce.is_some());
            self.len_bytes += data.len() as u64;
            if self.partial_len > 0 {
                let n = (16 - self.partial_len).min(data.len());
                self.partial[self.partial_len..self.partial_len + n].copy_from_slice(&data[..n]);
                self.partial_len += n;
                data = &data[n..];
                if self.partial_len < 16 {
                    return;
                }
                self.ghash.update_padded(&self.partial);
                self.partial_len = 0;
            }
            // Whole blocks go straight in (no padding is added to a multiple of 16).
            let whole = data.len() / 16 * 16;
            if whole > 0 {
                self.ghash.update_padded(&data[..whole]);
            }
            let rest = &data[whole..];
            self.partial[..rest.len()].copy_from_slice(rest);
            self.partial_len = rest.len();
        }

        fn finalize(&mut self) -> u128 {
            debug_assert!(self.nonce.is_some());
            if self.partial_len > 0 {
                self.ghash.update_padded(&self.partial[..self.partial_len]);
                self.partial_len = 0;
            }
            let mut lengths = ghash::Block::default();
            lengths[..8].copy_from_slice(&(self.len_bytes * 8).to_be_bytes());
            self.ghash.update(&[lengths]);
            let ghash = std::mem::replace(&mut self.ghash, self.ghash_init.clone());
            let mut tag = ghash.finalize();
            let mut j0 = ghash::Block::default();
            j0[..12].copy_from_slice(&self.nonce.unwrap_or_default());
            j0[15] = 1;
            self.cipher.encrypt_block(&mut j0);
            for (t, m) in tag.iter_mut().zip(j0.iter()) {
                *t ^= *m;
            }
            self.len_bytes = 0;
            let tag: [u8; 16] = tag.into();
            u128::from_le_bytes(tag)
        }

        fn clone_box(&self) -> Box<dyn SigningAlgo> {
            Box::new(self.clone())
        }

        fn signs_whole(&self) -> bool {
            self.whole.is_some()
        }

        fn sign_whole(&mut self, header: &Header, message: &[u8]) -> Option<u128> {
            let gcm = self.whole.as_ref()?;
            Some(u128::from_le_bytes(gcm.gmac(&Self::make_nonce(header), message)))
        }
    }

    /// ioscope patch: graviola's AES-GCM, used only where the CPU has every feature
    /// graviola asserts at its first use (it panics otherwise), so the streamed
    /// path stays the fallback everywhere else.
    mod whole {
        #[cfg(target_arch = "x86_64")]
        pub struct Gcm(graviola::aead::AesGcm);
        #[cfg(not(target_arch = "x86_64"))]
        pub enum Gcm {}

        impl Gcm {
            #[cfg(target_arch = "x86_64")]
            pub fn new(key: &super::SigningKey) -> Option<Self> {
                let has = || {
                    std::is_x86_feature_detected!("aes")
                        && std::is_x86_feature_detected!("pclmulqdq")
                        && std::is_x86_feature_detected!("bmi1")
                        && std::is_x86_feature_detected!("adx")
                        && std::is_x86_feature_detected!("avx")
                        && std::is_x86_feature_detected!("avx2")
                };
                has().then(|| Gcm(graviola::aead::AesGcm::new(&key[..])))
            }

            #[cfg(not(target_arch = "x86_64"))]
            pub fn new(_key: &super::SigningKey) -> Option<Self> {
                None
            }

            /// AES-GMAC: AES-GCM's tag with `aad` and no plaintext.
            #[cfg(target_arch = "x86_64")]
            pub fn gmac(&self, nonce: &[u8; 12], aad: &[u8]) -> [u8; 16] {
                let mut tag = [0u8; 16];
                self.0.encrypt(nonce, aad, &mut [], &mut tag);
                tag
            }

            #[cfg(not(target_arch = "x86_64"))]
            pub fn gmac(&self, _nonce: &[u8; 12], _aad: &[u8]) -> [u8; 16] {
                match *self {}
            }
        }
    }

    impl std::fmt::Debug for Gmac128Signer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Gmac128Signer").finish()
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use aes_gcm::{Aes128Gcm, Key, aead::AeadInOut};

        /// The streamed tag equals AES-GCM's over the whole message, however the
        /// message is cut into updates.
        #[test]
        fn streamed_gmac_matches_one_shot_aes_gcm() {
            let key: SigningKey = *b"0123456789abcdef";
            let msg: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 13) as u8).collect();
            let nonce: Gmac128Nonce = *b"nonce-12byte";
            let gcm = Aes128Gcm::new(&Key::<Aes128>::from(key));
            let mut empty: Vec<u8> = vec![];
            let want = gcm
                .encrypt_inout_detached(&nonce.into(), &msg, empty.as_mut_slice().into())
                .unwrap();
            let want = u128::from_le_bytes(want.into());
            for cuts in [&[][..], &[64][..], &[1, 2, 3][..], &[15, 16, 17, 100][..], &[4999][..]] {
                let mut g = Gmac128Signer::new(&key);
                g.nonce = Some(nonce);
                let mut at = 0;
                for &c in cuts {
                    g.update(&msg[at..at + c]);
                    at += c;
                }
                g.update(&msg[at..]);
                assert_eq!(g.finalize(), want, "cuts {cuts:?}");
                // Used again after finalize (start resets it).
                g.nonce = Some(nonce);
                g.update(&msg);
                assert_eq!(g.finalize(), want);
            }
            // The whole-message path gives the same tag, for every length around
            // a block and graviola's 8-block stride.
            let g = Gmac128Signer::new(&key);
            if let Some(gcm) = &g.whole {
                for len in [0, 1, 15, 16, 17, 127, 128, 129, 4999, 5000] {
                    let mut s = Gmac128Signer::new(&key);
                    s.nonce = Some(nonce);
                    s.update(&msg[..len]);
                    let streamed = s.finalize();
                    let whole = u128::from_le_bytes(gcm.gmac(&nonce, &msg[..len]));
                    assert_eq!(whole, streamed, "length {len}");
                }
            }
        }
    }
}
